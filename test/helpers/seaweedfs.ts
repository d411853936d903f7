/**
 * A real S3-compatible server on loopback: SeaweedFS (`weed server` with its filer and S3 gateway) in a temp dir, on
 * free ports, with one identity whose credentials it checks (requests signed with any other key are refused).
 * scripts/setup.sh installs the `weed` binary into the cache dir.
 */
import { BucketAlreadyOwnedByYou, CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../bench/lib/server-process.js';
import { makeTempDir } from './app.js';
import { startDaemon, waitFor } from './daemon.js';

export const weedVersion = '4.48';
export const weedPath = path.join(process.env.VOXD_CACHE_DIR ?? path.join(homedir(), '.cache', 'voxd'), 'seaweedfs', weedVersion, 'weed');

export interface Seaweedfs {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

export async function startSeaweedfs(): Promise<Seaweedfs> {
  if (!existsSync(weedPath)) throw new Error(`${weedPath} is missing: run scripts/setup.sh (it installs SeaweedFS ${weedVersion})`);
  const dir = makeTempDir('seaweedfs');
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc] = (await distinctFreePorts(8)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const accessKeyId = `voxd${randomBytes(8).toString('hex')}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  const identities = {
    identities: [
      {
        name: 'voxd',
        credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }],
        actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
      },
    ],
  };
  writeFileSync(path.join(dir, 's3.json'), JSON.stringify(identities));
  const args = [
    'server',
    `-dir=${dir}`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-master.port=${master}`,
    `-master.port.grpc=${masterGrpc}`,
    '-master.telemetry=false',
    '-master.volumeSizeLimitMB=64',
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    '-volume.max=0',
    '-volume.preStopSeconds=0',
    '-filer',
    `-filer.port=${filer}`,
    `-filer.port.grpc=${filerGrpc}`,
    `-filer.localSocket=${path.join(dir, 'filer.sock')}`,
    '-s3',
    `-s3.port=${s3}`,
    `-s3.port.grpc=${s3Grpc}`,
    `-s3.localSocket=${path.join(dir, 's3.sock')}`,
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    `-s3.config=${path.join(dir, 's3.json')}`,
  ];
  // weed names its gRPC sockets /tmp/seaweedfs-<service>-grpc-<port>.sock whatever TMPDIR says (its logs follow TMPDIR).
  const sockets = [
    ['master', masterGrpc],
    ['volume', volumeGrpc],
    ['filer', filerGrpc],
    ['s3', s3Grpc],
  ].map(([service, port]) => `/tmp/seaweedfs-${service}-grpc-${port}.sock`);
  const daemon = startDaemon(dir, weedPath, args, {
    env: { ...process.env, TMPDIR: dir },
    // Its data is thrown away: no graceful stop (that waits for volume heartbeats, about 15 s).
    stopSignal: 'SIGKILL',
    graceMs: 0,
    cleanup: () => {
      for (const socket of sockets) rmSync(socket, { force: true });
    },
  });
  const endpoint = `http://127.0.0.1:${s3}`;
  const bucket = 'voxd-test';
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
  try {
    // The S3 gateway answers once master, volume and filer are up (about 5 s); the bucket is the first real request.
    await waitFor('SeaweedFS', daemon, 60_000, () =>
      client.send(new CreateBucketCommand({ Bucket: bucket })).catch((error: unknown) => {
        // A retry after a create whose answer was lost.
        if (!(error instanceof BucketAlreadyOwnedByYou)) throw error;
      }),
    );
  } catch (error) {
    await daemon.stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, bucket, accessKeyId, secretAccessKey, stop: daemon.stop };
}
