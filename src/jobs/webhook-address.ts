/**
 * Where webhooks may go. A webhook URL is the caller's choice of a destination for a request made by this server, so by
 * default only public unicast addresses are allowed (after DNS resolution, checked again on every connection so a
 * name that resolves differently later cannot reach the private network).
 */
import { lookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { VoxError } from '../core/errors.js';

export interface WebhookAddressPolicy {
  /** VOXD_WEBHOOK_ALLOW_PRIVATE: loopback, private and link-local destinations allowed (tests, private deployments). */
  allowPrivate: boolean;
}

const maxUrlLength = 2048;

/** Why an address is refused, or undefined when it is a public unicast address. */
export function refusedRange(address: string): string | undefined {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  return range === 'unicast' ? undefined : range;
}

const invalid = (message: string): VoxError => new VoxError('invalid_request', message, { param: 'webhook_url' });

/** The URL's syntax and scheme; with the default policy, also where its host resolves now. */
export async function checkWebhookUrl(text: string, policy: WebhookAddressPolicy): Promise<URL> {
  if (text.length > maxUrlLength) throw invalid(`webhook_url is longer than ${maxUrlLength} characters.`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`webhook_url '${text}' is not an absolute URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('webhook_url must be an http or https URL.');
  if (url.username || url.password) throw invalid('webhook_url must not carry credentials; verify deliveries by their signature.');
  if (!policy.allowPrivate) await resolvePublic(url.hostname.replace(/^\[|\]$/g, ''));
  return url;
}

/** Resolves a host and refuses it unless every address is public unicast. */
export async function resolvePublic(host: string): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  try {
    addresses = ipaddr.isValid(host) ? [{ address: host, family: host.includes(':') ? 6 : 4 }] : await lookup(host, { all: true });
  } catch (error) {
    throw new VoxError('invalid_request', `webhook_url host '${host}' does not resolve.`, { param: 'webhook_url', cause: error });
  }
  for (const { address } of addresses) {
    const range = refusedRange(address);
    if (range)
      throw invalid(
        `webhook_url host '${host}' resolves to ${address} (${range}); only public addresses are allowed ` +
          `(VOXD_WEBHOOK_ALLOW_PRIVATE=true allows private ones).`,
      );
  }
  return addresses;
}
