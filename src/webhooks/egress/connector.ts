import { request as httpRequest } from 'node:http';
import { createServer, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { buildConnector } from 'undici';
import type { EgressProxy } from '../../config-egress.js';

/*
 * docs/webhooks.md#sending-addresses-allow-lists: how a delivery's connection leaves this host — from one of the fixed source
 * addresses (in turn), and through the egress proxy when there is one. The destination's address
 * is chosen (and, in production, judged by the SSRF rules) by the caller before anything here
 * runs, and the proxy is asked to CONNECT to that address itself, never to the host name: the
 * proxy resolves nothing, so a DNS answer that changed cannot take a delivery elsewhere.
 */

/** The proxy said no to the tunnel, or could not be reached; an attempt error like any other. */
export class EgressProxyError extends Error {
  override readonly name = 'EgressProxyError';
  readonly code = 'ERR_EGRESS_PROXY';
}

/** Source addresses handed out in turn, one per new connection. */
export function sourceAddressRotation(addresses: readonly string[]): () => string | undefined {
  let next = 0;
  return () => {
    if (addresses.length === 0) return undefined;
    const address = addresses[next % addresses.length];
    next++;
    return address;
  };
}

export interface TunnelTarget {
  /** The destination address already chosen and judged (an IP literal). */
  address: string;
  port: number;
  /** The URL's host name, for TLS's server name and certificate check. */
  servername: string;
  tls: boolean;
  localAddress: string | undefined;
  timeoutMs: number;
}

/**
 * Opens a tunnel through the proxy to the target (`CONNECT address:port`), then TLS over it for
 * https. Node's own HTTP client speaks the CONNECT exchange; this adds the deadline and the
 * messages an attempt log needs.
 */
export function connectThroughProxy(proxy: EgressProxy, target: TunnelTarget, callback: buildConnector.Callback): void {
  const authority = `${isIP(target.address) === 6 ? `[${target.address}]` : target.address}:${target.port}`;
  let done = false;
  const finish = (err: Error | null, socket: Socket | null) => {
    if (done) {
      socket?.destroy();
      return;
    }
    done = true;
    clearTimeout(timer);
    if (err) callback(err, null);
    else callback(null, socket as Parameters<buildConnector.Callback>[1] & object);
  };
  const timer = setTimeout(() => {
    connecting.destroy();
    finish(
      new EgressProxyError(`The proxy at ${proxyName(proxy)} did not open a tunnel to ${authority} in time`),
      null,
    );
  }, target.timeoutMs);
  const connecting = httpRequest({
    host: proxy.host,
    port: proxy.port,
    method: 'CONNECT',
    path: authority,
    headers: { host: authority, ...(proxy.authorization ? { 'proxy-authorization': proxy.authorization } : {}) },
    ...(target.localAddress ? { localAddress: target.localAddress } : {}),
    agent: false,
  });
  connecting.on('connect', (response, socket, head) => {
    if (response.statusCode !== 200) {
      socket.destroy();
      return finish(
        new EgressProxyError(
          `Proxy refused the connection to ${authority} (${response.statusCode} ${response.statusMessage ?? ''})`.trim(),
        ),
        null,
      );
    }
    // Bytes the proxy sent after its answer belong to the tunnel (none for a well-behaved proxy).
    if (head.length > 0) socket.unshift(head);
    if (!target.tls) return finish(null, socket);
    const secure = tlsConnect({
      socket,
      servername: isIP(target.servername) === 0 ? target.servername : undefined,
      ALPNProtocols: ['http/1.1'],
    });
    secure.once('secureConnect', () => finish(null, secure));
    secure.once('error', (err) => {
      secure.destroy();
      finish(err, null);
    });
  });
  connecting.on('response', (response) => {
    // An answer to CONNECT that is not a tunnel (some proxies answer 407 or 403 this way).
    response.resume();
    finish(new EgressProxyError(`Proxy refused the connection to ${authority} (${response.statusCode})`), null);
  });
  connecting.on('error', (err: NodeJS.ErrnoException) => {
    const reason = err.code === 'ECONNREFUSED' ? 'connection refused' : (err.code ?? err.message);
    finish(new EgressProxyError(`Proxy unreachable at ${proxyName(proxy)} (${reason})`), null);
  });
  connecting.end();
}

function proxyName(proxy: EgressProxy): string {
  return `${isIP(proxy.host) === 6 ? `[${proxy.host}]` : proxy.host}:${proxy.port}`;
}

/**
 * Start-up check of TESSERA_WEBHOOK_SOURCE_ADDRESSES: each address must be one this host can
 * send from, which binding a listener to it (port 0, closed at once) tells for certain.
 */
export async function checkSourceAddresses(addresses: readonly string[]): Promise<void> {
  for (const address of addresses) {
    await new Promise<void>((resolve, reject) => {
      const server = createServer();
      server.once('error', (err: NodeJS.ErrnoException) => {
        reject(
          new Error(
            `TESSERA_WEBHOOK_SOURCE_ADDRESSES: this host has no address ${address} to send webhooks from (${err.code ?? err.message})`,
          ),
        );
      });
      server.listen({ host: address, port: 0, exclusive: true }, () => server.close(() => resolve()));
    });
  }
}
