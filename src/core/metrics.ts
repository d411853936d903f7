/** Prometheus metrics, one registry per service instance (tests build several). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'voxd_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpSeconds = new Histogram({
    name: 'voxd_http_request_seconds',
    help: 'HTTP request latency',
    labelNames: ['method', 'route'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180, 600],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'voxd_queue_depth',
    help: 'Jobs waiting per operation and lane',
    labelNames: ['operation', 'lane'] as const,
    registers: [this.registry],
  });
  readonly jobsRunning = new Gauge({
    name: 'voxd_jobs_running',
    help: 'Jobs running per operation and lane',
    labelNames: ['operation', 'lane'] as const,
    registers: [this.registry],
  });
  readonly jobsSettled = new Counter({
    name: 'voxd_jobs_settled_total',
    help: 'Jobs settled by this node, per operation and final status',
    labelNames: ['operation', 'status'] as const,
    registers: [this.registry],
  });
  readonly jobQueueSeconds = new Histogram({
    name: 'voxd_job_queue_seconds',
    help: 'Time from a job being submitted to its first start',
    labelNames: ['operation'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
    registers: [this.registry],
  });
  readonly webhookAttempts = new Counter({
    name: 'voxd_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly builtinVoiceAnalyses = new Counter({
    name: 'voxd_builtin_voice_analyses_total',
    help: 'Analyses of built-in voices computed by this process (normally none after preparation), per analysis',
    labelNames: ['analysis'] as const,
    registers: [this.registry],
  });
  readonly inferenceSeconds = new Histogram({
    name: 'voxd_inference_seconds',
    help: 'Inference wall time per engine',
    labelNames: ['operation', 'engine', 'model'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1200],
    registers: [this.registry],
  });
  readonly realTimeFactor = new Histogram({
    name: 'voxd_inference_rtf',
    help: 'Inference seconds per second of audio, per engine',
    labelNames: ['operation', 'engine', 'model'] as const,
    buckets: [0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2, 5],
    registers: [this.registry],
  });

  readonly realtimeSessions = new Gauge({
    name: 'voxd_realtime_sessions',
    help: 'Open realtime sessions',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly realtimeCloses = new Counter({
    name: 'voxd_realtime_closes_total',
    help: 'Realtime sessions ended, by WebSocket close code',
    labelNames: ['kind', 'code'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'voxd_' });
  }

  recordInference(labels: { operation: string; engine: string; model: string }, elapsedSeconds: number, audioSeconds: number): void {
    this.inferenceSeconds.observe(labels, elapsedSeconds);
    if (audioSeconds > 0) this.realTimeFactor.observe(labels, elapsedSeconds / audioSeconds);
  }
}
