/** Server-Sent Events: each item of an async sequence as one `event:`/`data:` frame, and comments to keep proxies from timing out. */
import type { FastifyReply } from 'fastify';

const keepAliveMilliseconds = 15_000;

export async function sendEvents(reply: FastifyReply, items: AsyncIterable<unknown>, event: string): Promise<FastifyReply> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    'x-request-id': reply.request.id,
  });
  const keepAlive = setInterval(() => raw.write(': keep-alive\n\n'), keepAliveMilliseconds);
  try {
    let sequence = 0;
    for await (const item of items) {
      if (raw.destroyed) break;
      raw.write(`id: ${++sequence}\nevent: ${event}\ndata: ${JSON.stringify(item)}\n\n`);
    }
  } catch (error) {
    reply.request.log.warn({ err: error }, 'event stream stopped');
  } finally {
    clearInterval(keepAlive);
    raw.end();
  }
  return reply;
}
