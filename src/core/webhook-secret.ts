/** Standard Webhooks signing secrets: `whsec_` + base64 of 32 random bytes. */
import { randomBytes } from 'node:crypto';

export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;
