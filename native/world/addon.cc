// Node-API binding for the WORLD vocoder (F0 by DIO+StoneMask or Harvest, CheapTrick envelope, D4C aperiodicity,
// synthesis). Every call copies its inputs, runs on the libuv thread pool and resolves a promise, so the event loop
// never waits on DSP. Matrices travel as flat row-major Float64Arrays (frames x (fftSize/2 + 1)).
#include <node_api.h>

#include <cstring>
#include <string>
#include <vector>

#include "world/cheaptrick.h"
#include "world/d4c.h"
#include "world/dio.h"
#include "world/harvest.h"
#include "world/stonemask.h"
#include "world/synthesis.h"

namespace {

enum class Task { kF0, kAnalyse, kSynthesise };

struct Work {
  Task task;
  napi_async_work handle = nullptr;
  napi_deferred deferred = nullptr;
  // Inputs.
  std::vector<double> x;
  int sample_rate = 16000;
  double frame_period_ms = 5.0;
  double f0_floor_hz = 71.0;
  double f0_ceil_hz = 800.0;
  bool harvest = false;
  int fft_size = 1024;
  std::vector<double> f0_in;
  std::vector<double> sp_in;
  std::vector<double> ap_in;
  int output_length = 0;
  // Outputs.
  std::vector<double> f0;
  std::vector<double> sp;
  std::vector<double> ap;
  std::vector<double> y;
};

std::vector<double*> Rows(std::vector<double>& flat, int frames, int bins) {
  std::vector<double*> rows(frames);
  for (int i = 0; i < frames; ++i) rows[i] = flat.data() + static_cast<size_t>(i) * bins;
  return rows;
}

void EstimateF0(Work* w, std::vector<double>& time_axis) {
  const int length = static_cast<int>(w->x.size());
  if (w->harvest) {
    HarvestOption option;
    InitializeHarvestOption(&option);
    option.f0_floor = w->f0_floor_hz;
    option.f0_ceil = w->f0_ceil_hz;
    option.frame_period = w->frame_period_ms;
    const int frames = GetSamplesForHarvest(w->sample_rate, length, w->frame_period_ms);
    time_axis.assign(frames, 0.0);
    w->f0.assign(frames, 0.0);
    Harvest(w->x.data(), length, w->sample_rate, &option, time_axis.data(), w->f0.data());
    return;
  }
  DioOption option;
  InitializeDioOption(&option);
  option.f0_floor = w->f0_floor_hz;
  option.f0_ceil = w->f0_ceil_hz;
  option.frame_period = w->frame_period_ms;
  option.speed = 1;
  const int frames = GetSamplesForDIO(w->sample_rate, length, w->frame_period_ms);
  time_axis.assign(frames, 0.0);
  std::vector<double> raw(frames, 0.0);
  Dio(w->x.data(), length, w->sample_rate, &option, time_axis.data(), raw.data());
  w->f0.assign(frames, 0.0);
  StoneMask(w->x.data(), length, w->sample_rate, time_axis.data(), raw.data(), frames, w->f0.data());
}

void Execute(napi_env, void* data) {
  Work* w = static_cast<Work*>(data);
  const int bins = w->fft_size / 2 + 1;
  if (w->task == Task::kSynthesise) {
    const int frames = static_cast<int>(w->f0_in.size());
    std::vector<double*> sp = Rows(w->sp_in, frames, bins);
    std::vector<double*> ap = Rows(w->ap_in, frames, bins);
    w->y.assign(w->output_length, 0.0);
    Synthesis(w->f0_in.data(), frames, sp.data(), ap.data(), w->fft_size, w->frame_period_ms, w->sample_rate,
              w->output_length, w->y.data());
    return;
  }
  std::vector<double> time_axis;
  EstimateF0(w, time_axis);
  if (w->task == Task::kF0) return;
  const int length = static_cast<int>(w->x.size());
  const int frames = static_cast<int>(w->f0.size());
  CheapTrickOption ct;
  InitializeCheapTrickOption(w->sample_rate, &ct);
  ct.fft_size = w->fft_size;
  // CheapTrick needs its F0 floor consistent with the FFT size (longer windows than the FFT would alias).
  ct.f0_floor = GetF0FloorForCheapTrick(w->sample_rate, w->fft_size);
  w->sp.assign(static_cast<size_t>(frames) * bins, 0.0);
  std::vector<double*> sp = Rows(w->sp, frames, bins);
  CheapTrick(w->x.data(), length, w->sample_rate, time_axis.data(), w->f0.data(), frames, &ct, sp.data());
  D4COption d4c;
  InitializeD4COption(&d4c);
  w->ap.assign(static_cast<size_t>(frames) * bins, 0.0);
  std::vector<double*> ap = Rows(w->ap, frames, bins);
  D4C(w->x.data(), length, w->sample_rate, time_axis.data(), w->f0.data(), frames, w->fft_size, &d4c, ap.data());
}

napi_value ToFloat64Array(napi_env env, const std::vector<double>& v) {
  void* bytes = nullptr;
  napi_value buffer, array;
  napi_create_arraybuffer(env, v.size() * sizeof(double), &bytes, &buffer);
  if (!v.empty()) std::memcpy(bytes, v.data(), v.size() * sizeof(double));
  napi_create_typedarray(env, napi_float64_array, v.size(), buffer, 0, &array);
  return array;
}

void SetProperty(napi_env env, napi_value object, const char* name, napi_value value) {
  napi_set_named_property(env, object, name, value);
}

void Complete(napi_env env, napi_status status, void* data) {
  Work* w = static_cast<Work*>(data);
  if (status != napi_ok) {
    napi_value message, error;
    napi_create_string_utf8(env, "WORLD work was cancelled", NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, nullptr, message, &error);
    napi_reject_deferred(env, w->deferred, error);
  } else if (w->task == Task::kSynthesise) {
    napi_resolve_deferred(env, w->deferred, ToFloat64Array(env, w->y));
  } else if (w->task == Task::kF0) {
    napi_resolve_deferred(env, w->deferred, ToFloat64Array(env, w->f0));
  } else {
    napi_value result;
    napi_create_object(env, &result);
    SetProperty(env, result, "f0", ToFloat64Array(env, w->f0));
    SetProperty(env, result, "spectrogram", ToFloat64Array(env, w->sp));
    SetProperty(env, result, "aperiodicity", ToFloat64Array(env, w->ap));
    napi_resolve_deferred(env, w->deferred, result);
  }
  napi_delete_async_work(env, w->handle);
  delete w;
}

bool ReadDoubles(napi_env env, napi_value value, std::vector<double>& out) {
  bool is_typed = false;
  napi_is_typedarray(env, value, &is_typed);
  if (!is_typed) return false;
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  napi_get_typedarray_info(env, value, &type, &length, &data, nullptr, nullptr);
  if (type == napi_float64_array) {
    out.assign(static_cast<double*>(data), static_cast<double*>(data) + length);
  } else if (type == napi_float32_array) {
    const float* f = static_cast<float*>(data);
    out.assign(f, f + length);
  } else {
    return false;
  }
  return true;
}

double ReadNumber(napi_env env, napi_value options, const char* name, double fallback) {
  bool has = false;
  napi_has_named_property(env, options, name, &has);
  if (!has) return fallback;
  napi_value value;
  napi_get_named_property(env, options, name, &value);
  double number = fallback;
  if (napi_get_value_double(env, value, &number) != napi_ok) return fallback;
  return number;
}

napi_value Throw(napi_env env, const char* message) {
  napi_throw_type_error(env, nullptr, message);
  return nullptr;
}

napi_value Queue(napi_env env, Work* w, const char* name) {
  napi_value promise, resource_name;
  napi_create_promise(env, &w->deferred, &promise);
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &resource_name);
  napi_create_async_work(env, nullptr, resource_name, Execute, Complete, w, &w->handle);
  napi_queue_async_work(env, w->handle);
  return promise;
}

void ReadAnalysisOptions(napi_env env, napi_value options, Work* w) {
  w->sample_rate = static_cast<int>(ReadNumber(env, options, "sampleRate", 16000));
  w->frame_period_ms = ReadNumber(env, options, "framePeriodMs", 5.0);
  w->f0_floor_hz = ReadNumber(env, options, "f0FloorHz", 71.0);
  w->f0_ceil_hz = ReadNumber(env, options, "f0CeilHz", 800.0);
  w->harvest = ReadNumber(env, options, "harvest", 0) != 0;
  w->fft_size = static_cast<int>(ReadNumber(env, options, "fftSize", 1024));
}

// f0(samples, options) -> Promise<Float64Array>
napi_value F0(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  Work* w = new Work{Task::kF0};
  if (argc < 2 || !ReadDoubles(env, argv[0], w->x)) {
    delete w;
    return Throw(env, "f0(samples: Float32Array | Float64Array, options)");
  }
  ReadAnalysisOptions(env, argv[1], w);
  return Queue(env, w, "world.f0");
}

// analyse(samples, options) -> Promise<{ f0, spectrogram, aperiodicity }>
napi_value Analyse(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  Work* w = new Work{Task::kAnalyse};
  if (argc < 2 || !ReadDoubles(env, argv[0], w->x)) {
    delete w;
    return Throw(env, "analyse(samples: Float32Array | Float64Array, options)");
  }
  ReadAnalysisOptions(env, argv[1], w);
  return Queue(env, w, "world.analyse");
}

// synthesise(f0, spectrogram, aperiodicity, options: { sampleRate, framePeriodMs, fftSize, outputLength })
napi_value Synthesise(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  Work* w = new Work{Task::kSynthesise};
  if (argc < 4 || !ReadDoubles(env, argv[0], w->f0_in) || !ReadDoubles(env, argv[1], w->sp_in) ||
      !ReadDoubles(env, argv[2], w->ap_in)) {
    delete w;
    return Throw(env, "synthesise(f0, spectrogram, aperiodicity, options)");
  }
  ReadAnalysisOptions(env, argv[3], w);
  w->output_length = static_cast<int>(ReadNumber(env, argv[3], "outputLength", 0));
  const size_t bins = static_cast<size_t>(w->fft_size / 2 + 1);
  if (w->sp_in.size() != w->f0_in.size() * bins || w->ap_in.size() != w->f0_in.size() * bins || w->output_length <= 0) {
    delete w;
    return Throw(env, "synthesise: matrices must be frames x (fftSize/2+1) and outputLength positive");
  }
  return Queue(env, w, "world.synthesise");
}

napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"f0", nullptr, F0, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"analyse", nullptr, Analyse, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"synthesise", nullptr, Synthesise, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
