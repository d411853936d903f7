/** The picture of a video file: found, and kept as it is while its sound is replaced (no re-encoding). */
import { VoxError } from '../core/errors.js';
import { ffmpegBaseArgs, runProcess } from './ffmpeg.js';

export interface VideoStream {
  codec: string;
  /** The container ffprobe names, e.g. `mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`. */
  container: string;
}

interface FfprobeVideo {
  streams?: Array<{ codec_name?: string; disposition?: { attached_pic?: number } }>;
  format?: { format_name?: string };
}

/** The file's first moving-picture stream (cover art in a music file is not one); undefined for audio only. */
export async function probeVideo(path: string, signal?: AbortSignal): Promise<VideoStream | undefined> {
  const result = await runProcess(
    'ffprobe',
    [
      '-v',
      'error',
      '-select_streams',
      'v',
      '-show_entries',
      'format=format_name:stream=codec_name:stream_disposition=attached_pic',
      '-of',
      'json',
      path,
    ],
    { ...(signal ? { signal } : {}) },
  );
  if (result.exitCode !== 0) return undefined;
  const parsed = JSON.parse(result.stdout.toString('utf8')) as FfprobeVideo;
  const stream = parsed.streams?.find((s) => s.disposition?.attached_pic !== 1);
  return stream ? { codec: stream.codec_name ?? 'unknown', container: parsed.format?.format_name ?? 'unknown' } : undefined;
}

/** The container a video with replaced sound is written in, and its audio codec: MP4 and WebM stay so, others go to Matroska. */
export function remuxTarget(video: VideoStream): { extension: string; contentType: string; audioCodec: string[] } {
  if (video.container.includes('mp4') || video.container.includes('mov'))
    return { extension: 'mp4', contentType: 'video/mp4', audioCodec: ['-c:a', 'aac', '-b:a', '160k'] };
  if (video.container.includes('webm') && ['vp8', 'vp9', 'av1'].includes(video.codec))
    return { extension: 'webm', contentType: 'video/webm', audioCodec: ['-c:a', 'libopus', '-b:a', '128k'] };
  return { extension: 'mkv', contentType: 'video/x-matroska', audioCodec: ['-c:a', 'aac', '-b:a', '160k'] };
}

/** Writes `videoPath`'s picture (copied, not re-encoded) with `audioPath` as its only sound track into `outputPath`. */
export async function replaceAudio(videoPath: string, audioPath: string, outputPath: string, signal?: AbortSignal): Promise<void> {
  const video = await probeVideo(videoPath, signal);
  if (!video) throw new VoxError('internal', 'The file has no video stream to keep.');
  const result = await runProcess(
    'ffmpeg',
    [
      ...ffmpegBaseArgs,
      '-i',
      videoPath,
      '-i',
      audioPath,
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      '-c:v',
      'copy',
      ...remuxTarget(video).audioCodec,
      outputPath,
    ],
    { ...(signal ? { signal } : {}) },
  );
  if (result.exitCode !== 0) throw new VoxError('internal', 'Putting the dubbed sound into the video failed.', { cause: result.stderr });
}
