// Preloaded into the hermes-bridge relay by the benchmark (node --require): its server
// calls listen(port) on every interface; this makes that listen bind 127.0.0.1 only, so
// the benchmark serves nothing beyond loopback. The relay's own code is not touched.
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (port, ...rest) {
  if (typeof port === 'number' && (rest.length === 0 || typeof rest[0] === 'function')) {
    return listen.call(this, port, '127.0.0.1', ...rest);
  }
  return listen.call(this, port, ...rest);
};
