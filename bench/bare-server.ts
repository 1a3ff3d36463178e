/**
 * The denominator of the benchmark: a bare Fastify route in its own process (so that it never
 * shares an event loop with the service), which parses the same JSON body a payment request
 * carries and answers a small envelope. No logger, no hooks, no database.
 *
 *   node --import tsx bench/bare-server.ts <port>
 */
import Fastify from 'fastify';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  process.stderr.write('usage: bare-server.ts <port>\n');
  process.exit(1);
}

const app = Fastify({ logger: false });
app.get('/health', async () => ({ status: 'ok' }));
app.post('/bare', async () => ({ code: 'success', msg: 'success', data: { id: 'pt_0000000000000000000' } }));

await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`bare route listening on 127.0.0.1:${port}\n`);

const stop = () => {
  app.close().finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
