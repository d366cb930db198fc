// A lost update over loopback TCP on node's event loop: a net server and
// two clients in one process; the second client starts 2 ms after the
// first; each reads the count, then writes back one more.  With "fixed"
// the server increments itself ("inc"): no update can be lost.
const net = require('net');
const fixed = process.argv[2] === 'fixed';
let count = 0;

const server = net.createServer((sock) => {
  let buf = '';
  sock.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line === 'get') sock.write(count + '\n');
      else if (line === 'inc') { count++; sock.write('ok\n'); }
      else { count = parseInt(line.slice(4)); sock.write('ok\n'); }
    }
  });
});

function client(port) {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1',
                          () => c.write(fixed ? 'inc\n' : 'get\n'));
    let buf = '', state = fixed ? 1 : 0;
    c.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (state === 0) {
          state = 1;
          c.write('set ' + (parseInt(line) + 1) + '\n');
        } else {
          c.end();
          resolve();
        }
      }
    });
  });
}

server.listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  const one = client(port);
  const two = new Promise((r) => setTimeout(() => client(port).then(r), 2));
  await Promise.all([one, two]);
  server.close();
  console.log('count', count);
  process.exitCode = count === 2 ? 0 : 1;
});
