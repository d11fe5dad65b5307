// Preloaded (node --require) into the reference MCP servers in the tests:
// server-everything listens on every interface, and a test may listen on
// loopback only. Every server the process starts is bound to 127.0.0.1,
// and the first port it listens on is written to $ASK_TEST_PORT_FILE
// (through a rename, so that a reader never sees half of it).
'use strict';
const net = require('net');
const fs = require('fs');

const listen = net.Server.prototype.listen;
let written = false;
net.Server.prototype.listen = function (...args) {
  if (args[0] !== null && typeof args[0] === 'object') {
    args[0] = Object.assign({}, args[0], { host: '127.0.0.1' });
  } else if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    const callbacks = args.slice(1).filter((a) => typeof a === 'function');
    args = [Number(args[0]), '127.0.0.1', ...callbacks];
  }
  this.once('listening', () => {
    const file = process.env.ASK_TEST_PORT_FILE;
    if (!file || written) return;
    written = true;
    fs.writeFileSync(file + '.tmp', String(this.address().port));
    fs.renameSync(file + '.tmp', file);
  });
  return listen.apply(this, args);
};
