/**
 * Where requests this server makes for a caller may go (webhooks, audio_url downloads). The URL is the caller's choice,
 * so by default only public unicast addresses are allowed (after DNS resolution, checked again on every connection so a
 * name that resolves differently later cannot reach the private network).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import type { Agent } from 'undici';
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

const invalid = (param: string, message: string): VoxError => new VoxError('invalid_request', message, { param });

/**
 * The URL's syntax and scheme; with the default policy, also where its host resolves now. `param` names the field in
 * errors; `setting` the configuration that allows private addresses for it.
 */
export async function checkCallerUrl(
  text: string,
  policy: WebhookAddressPolicy,
  param = 'webhook_url',
  setting = 'VOXD_WEBHOOK_ALLOW_PRIVATE',
): Promise<URL> {
  if (text.length > maxUrlLength) throw invalid(param, `${param} is longer than ${maxUrlLength} characters.`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(param, `${param} '${text}' is not an absolute URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(param, `${param} must be an http or https URL.`);
  if (url.username || url.password)
    throw invalid(param, `${param} must not carry credentials${param === 'webhook_url' ? '; verify deliveries by their signature' : ''}.`);
  if (!policy.allowPrivate) await resolvePublic(url.hostname.replace(/^\[|\]$/g, ''), param, setting);
  return url;
}

export const checkWebhookUrl = (text: string, policy: WebhookAddressPolicy): Promise<URL> => checkCallerUrl(text, policy);

/** Resolves a host and refuses it unless every address is public unicast. */
export async function resolvePublic(host: string, param = 'webhook_url', setting = 'VOXD_WEBHOOK_ALLOW_PRIVATE'): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  try {
    addresses = ipaddr.isValid(host) ? [{ address: host, family: host.includes(':') ? 6 : 4 }] : await lookup(host, { all: true });
  } catch (error) {
    throw new VoxError('invalid_request', `${param} host '${host}' does not resolve.`, { param, cause: error });
  }
  for (const { address } of addresses) {
    const range = refusedRange(address);
    if (range)
      throw invalid(
        param,
        `${param} host '${host}' resolves to ${address} (${range}); only public addresses are allowed ` +
          `(${setting}=true allows private ones).`,
      );
  }
  return addresses;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * An HTTP agent whose every connection checks the addresses it is about to use (no DNS-rebinding way around the policy).
 * undici is loaded here, when an agent is first needed: importing it cost every CLI command about 0.15 s of CPU (issue 35).
 */
export async function guardedAgent(policy: WebhookAddressPolicy): Promise<Agent> {
  const { Agent } = await import('undici');
  if (policy.allowPrivate) return new Agent();
  const lookup = (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.find((a) => refusedRange(a.address));
      if (refused)
        return callback(
          Object.assign(
            new Error(`${hostname} resolves to ${refused.address} (${refusedRange(refused.address)}), which this server may not reach`),
            { code: 'EADDRNOTAVAIL' },
          ),
          [],
        );
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
  return new Agent({ connect: { lookup: lookup as never } });
}
