/** PostgreSQL and SeaweedFS started for a test or bench, and the environment that points voxd nodes at them. */
import { startPostgres } from './postgres.js';
import { startSeaweedfs } from './seaweedfs.js';

export async function startNetworkStore(): Promise<{ env: Record<string, string>; stop(): Promise<void> }> {
  const [postgres, s3] = await Promise.all([startPostgres(), startSeaweedfs()]);
  return {
    env: {
      VOXD_DATABASE_URL: postgres.url,
      VOXD_BLOB_URL: `s3://${s3.bucket}/voxd`,
      VOXD_S3_ENDPOINT: s3.endpoint,
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    },
    stop: async () => {
      await Promise.all([postgres.stop(), s3.stop()]);
    },
  };
}
