// voxd's Node-API binding of whisper.cpp: a model is loaded once and shared; each transcription gets its own
// whisper_state and runs on the libuv thread pool, so calls may overlap and the event loop stays free. Finished states are
// kept for the next call: a fresh state allocated and cleared its caches and buffers again, about 1.2 of the 14 CPU seconds
// of a 67 s file (chunk by chunk) here.
//
// A call may bring its own encoder, a JS function (onnxruntime in voxd), which whisper.cpp then calls for every window
// instead of running its conv and encoder graphs (whisper-encoder-input.patch): the decoding thread hands the window's
// mel to the JS thread through a thread-safe function and waits until the JS side calls back with the encoder output.
#include <node_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "whisper.h"

namespace {

#define CHECK(env, call)                                                  \
  do {                                                                    \
    if ((call) != napi_ok) {                                              \
      napi_throw_error((env), nullptr, "voxd_whisper: N-API call failed"); \
      return nullptr;                                                     \
    }                                                                     \
  } while (0)

// Encoder frames (50 a second) language detection sees at least when the transcription's context is cut (see transcribe).
constexpr int minDetectionAudioContext = 256;

// States kept idle per model: as many as calls usually overlap (one per engine slot); more are freed when they finish.
constexpr size_t maxIdleStates = 2;

struct Model {
  whisper_context* ctx = nullptr;
  std::mutex idleMutex;
  std::vector<whisper_state*> idleStates;

  whisper_state* acquireState() {
    {
      std::lock_guard<std::mutex> lock(idleMutex);
      if (!idleStates.empty()) {
        whisper_state* state = idleStates.back();
        idleStates.pop_back();
        return state;
      }
    }
    return whisper_init_state(ctx);
  }

  void releaseState(whisper_state* state) {
    {
      std::lock_guard<std::mutex> lock(idleMutex);
      if (idleStates.size() < maxIdleStates) {
        idleStates.push_back(state);
        return;
      }
    }
    whisper_free_state(state);
  }
};

struct Token {
  int id;
  std::string text;
  float p, plog;
  int64_t t0, t1, tDtw;
};

struct Segment {
  int64_t t0, t1;
  std::string text;
  float noSpeechProbability;
  float averageLogProbability;
  std::vector<Token> tokens;
};

// One window's encoding, shared by the waiting decoding thread and the JS completion (which may come after the thread
// gave up: an abort, or the environment shutting down).
struct EncodeRequest {
  std::vector<float> mel;
  int frames = 0;
  size_t outputSize = 0;
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  bool ok = false;
  std::vector<float> output;
  std::string error;

  void finish(bool succeeded, std::string message = {}) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (done) return;
      done = true;
      ok = succeeded;
      error = std::move(message);
    }
    finished.notify_all();
  }
};

// Set by the environment's cleanup hook or closing(): a decoding thread waiting for an encoder result gives up instead of
// keeping the process from exiting. Shared with the jobs, which may outlive the environment's data.
using ClosingFlag = std::shared_ptr<std::atomic<bool>>;

struct TranscribeJob {
  napi_async_work work = nullptr;
  napi_deferred deferred = nullptr;
  napi_ref modelRef = nullptr;
  napi_ref abortRef = nullptr;
  Model* model = nullptr;
  std::vector<float> samples;
  volatile int32_t* abortFlag = nullptr;
  // The call's encoder (JS), or null for whisper.cpp's own.
  napi_threadsafe_function encoder = nullptr;
  ClosingFlag environmentClosing;
  std::string encoderError;
  // options
  std::string language = "auto";
  std::string prompt;
  int threads = 2;
  float temperature = 0.0f;
  float temperatureIncrement = 0.2f;
  int beamSize = 5;
  int bestOf = 5;
  float entropyThreshold = 2.4f;
  float logprobThreshold = -1.0f;
  float noSpeechThreshold = 0.6f;
  bool suppressNonSpeech = true;
  bool suppressBlank = true;
  bool translate = false;
  bool noContext = true;
  bool singleSegment = false;
  int audioContext = 0;
  int maxTokens = 0;
  int endOfAudioMarginMs = 0;
  // Only detect the language (language "auto"): no decoding, no segments.
  bool detectOnly = false;
  // Forced alignment: the decoder is made to say exactly these tokens (the text, tokenized here), then end.
  std::string forcedText;
  std::vector<whisper_token> forcedTokens;
  // results
  // Each forced token's log-probability under the model before forcing: how well the audio carries it.
  std::vector<float> forcedLogProbabilities;
  std::string error;
  std::string detectedLanguage;
  float languageProbability = 1.0f;
  // Every language's probability (whisper.cpp's language ids), when it was detected: callers that detect per stretch of
  // speech combine stretches' probabilities.
  std::vector<float> languageProbabilities;
  // Temperature of the accepted decoding (whisper-temperature.patch); above the first one after a fallback.
  float acceptedTemperature = 0.0f;
  std::vector<Segment> segments;
};

struct LoadJob {
  napi_async_work work = nullptr;
  napi_deferred deferred = nullptr;
  std::string path;
  int dtwPreset = WHISPER_AHEADS_NONE;
  whisper_context* ctx = nullptr;
};

void silentLog(ggml_log_level, const char*, void*) {}

bool abortRequested(void* data) {
  auto* flag = static_cast<volatile int32_t*>(data);
  return flag != nullptr && *flag != 0;
}

std::string getString(napi_env env, napi_value value);

// whisper_encoder_callback on the decoding thread: queues the window for the JS encoder and waits for its output.
bool encodeWindow(const float* mel, int melBins, int frames, float* embd, int context, int state, void* data) {
  auto* job = static_cast<TranscribeJob*>(data);
  if (abortRequested(const_cast<int32_t*>(job->abortFlag))) return false;
  auto request = std::make_shared<EncodeRequest>();
  request->mel.assign(mel, mel + static_cast<size_t>(melBins) * frames);
  request->frames = frames;
  request->outputSize = static_cast<size_t>(context) * state;
  // The JS side holds its own reference: the request outlives this call if the thread stops waiting.
  auto* held = new std::shared_ptr<EncodeRequest>(request);
  if (napi_call_threadsafe_function(job->encoder, held, napi_tsfn_blocking) != napi_ok) {
    delete held;
    job->encoderError = "the encoder could not be called (the environment is closing)";
    return false;
  }
  std::unique_lock<std::mutex> lock(request->mutex);
  // Polled: an abort or the environment closing ends the wait without the JS side's help.
  while (!request->done) {
    if (abortRequested(const_cast<int32_t*>(job->abortFlag)) || *job->environmentClosing) return false;
    request->finished.wait_for(lock, std::chrono::milliseconds(20));
  }
  if (!request->ok) {
    job->encoderError = request->error;
    return false;
  }
  std::memcpy(embd, request->output.data(), request->outputSize * sizeof(float));
  return true;
}

void deleteRequest(napi_env, void* data, void*) {
  auto* held = static_cast<std::shared_ptr<EncodeRequest>*>(data);
  (*held)->finish(false, "the encoder never called back");
  delete held;
}

// done(embd: Float32Array) or done(null, message): the JS encoder's completion.
napi_value encoderDone(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  void* data = nullptr;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, &data) != napi_ok) return nullptr;
  EncodeRequest& request = **static_cast<std::shared_ptr<EncodeRequest>*>(data);
  bool isTypedArray = false;
  if (argc > 0) napi_is_typedarray(env, argv[0], &isTypedArray);
  if (isTypedArray) {
    napi_typedarray_type type;
    size_t length = 0;
    void* values = nullptr;
    napi_get_typedarray_info(env, argv[0], &type, &length, &values, nullptr, nullptr);
    if (type == napi_float32_array && length == request.outputSize) {
      {
        std::lock_guard<std::mutex> lock(request.mutex);
        if (!request.done) request.output.assign(static_cast<float*>(values), static_cast<float*>(values) + length);
      }
      request.finish(true);
    } else {
      request.finish(false, "the encoder returned " + std::to_string(length) + " values instead of " + std::to_string(request.outputSize));
    }
  } else {
    napi_valuetype type = napi_undefined;
    if (argc > 1) napi_typeof(env, argv[1], &type);
    std::string message = type == napi_string ? getString(env, argv[1]) : std::string("the encoder failed");
    request.finish(false, message);
  }
  return nullptr;
}

// A Float32Array holding a copy of the values, or nullptr if N-API failed.
napi_value floatArray(napi_env env, const std::vector<float>& values) {
  napi_value buffer, array;
  void* bytes = nullptr;
  if (napi_create_arraybuffer(env, values.size() * sizeof(float), &bytes, &buffer) != napi_ok) return nullptr;
  std::memcpy(bytes, values.data(), values.size() * sizeof(float));
  if (napi_create_typedarray(env, napi_float32_array, values.size(), buffer, 0, &array) != napi_ok) return nullptr;
  return array;
}

// Thread-safe function body, on the JS thread: encoder(mel: Float32Array, frames, done). Nothing thrown by the JS
// function reaches the decoding thread: an exception fails the window.
void callEncoder(napi_env env, napi_value encoder, void*, void* data) {
  auto* held = static_cast<std::shared_ptr<EncodeRequest>*>(data);
  std::shared_ptr<EncodeRequest> request = *held;
  if (env == nullptr) {
    request->finish(false, "the environment is closing");
    delete held;
    return;
  }
  napi_value frames, done, result;
  napi_value mel = floatArray(env, request->mel);
  const bool called = mel != nullptr && napi_create_int32(env, request->frames, &frames) == napi_ok &&
                      napi_create_function(env, "done", NAPI_AUTO_LENGTH, encoderDone, held, &done) == napi_ok &&
                      napi_add_finalizer(env, done, held, deleteRequest, nullptr, nullptr) == napi_ok;
  if (!called) {
    request->finish(false, "could not call the encoder");
    return;
  }
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  napi_value argv[3] = {mel, frames, done};
  if (napi_call_function(env, undefined, encoder, 3, argv, &result) != napi_ok) {
    napi_value exception;
    napi_get_and_clear_last_exception(env, &exception);
    request->finish(false, "the encoder threw");
  }
}

std::string getString(napi_env env, napi_value value) {
  size_t length = 0;
  napi_get_value_string_utf8(env, value, nullptr, 0, &length);
  std::string result(length, '\0');
  napi_get_value_string_utf8(env, value, result.data(), length + 1, &length);
  return result;
}

napi_value property(napi_env env, napi_value object, const char* name) {
  bool has = false;
  if (napi_has_named_property(env, object, name, &has) != napi_ok || !has) return nullptr;
  napi_value value;
  napi_get_named_property(env, object, name, &value);
  napi_valuetype type;
  napi_typeof(env, value, &type);
  return type == napi_undefined || type == napi_null ? nullptr : value;
}

void readNumber(napi_env env, napi_value options, const char* name, float& target) {
  if (napi_value v = property(env, options, name)) {
    double d;
    if (napi_get_value_double(env, v, &d) == napi_ok) target = static_cast<float>(d);
  }
}

void readInt(napi_env env, napi_value options, const char* name, int& target) {
  if (napi_value v = property(env, options, name)) napi_get_value_int32(env, v, &target);
}

void readBool(napi_env env, napi_value options, const char* name, bool& target) {
  if (napi_value v = property(env, options, name)) napi_get_value_bool(env, v, &target);
}

void setNumber(napi_env env, napi_value object, const char* name, double value) {
  napi_value v;
  napi_create_double(env, value, &v);
  napi_set_named_property(env, object, name, v);
}

void setString(napi_env env, napi_value object, const char* name, const std::string& value) {
  napi_value v;
  napi_create_string_utf8(env, value.data(), value.size(), &v);
  napi_set_named_property(env, object, name, v);
}

void rejectWith(napi_env env, napi_deferred deferred, const std::string& message) {
  napi_value text, error;
  napi_create_string_utf8(env, message.c_str(), message.size(), &text);
  napi_create_error(env, nullptr, text, &error);
  napi_reject_deferred(env, deferred, error);
}

// ---- load(path, { dtwPreset }) -> Promise<model>

void loadExecute(napi_env, void* data) {
  auto* job = static_cast<LoadJob*>(data);
  whisper_context_params params = whisper_context_default_params();
  params.use_gpu = false;
  // DTW token timestamps are silently wrong with flash attention on.
  params.flash_attn = false;
  if (job->dtwPreset != WHISPER_AHEADS_NONE) {
    params.dtw_token_timestamps = true;
    params.dtw_aheads_preset = static_cast<whisper_alignment_heads_preset>(job->dtwPreset);
  }
  job->ctx = whisper_init_from_file_with_params_no_state(job->path.c_str(), params);
}

void finalizeModel(napi_env, void* data, void*) {
  auto* model = static_cast<Model*>(data);
  for (whisper_state* state : model->idleStates) whisper_free_state(state);
  if (model->ctx) whisper_free(model->ctx);
  delete model;
}

void loadComplete(napi_env env, napi_status, void* data) {
  auto* job = static_cast<LoadJob*>(data);
  if (!job->ctx) {
    rejectWith(env, job->deferred, "whisper.cpp could not load the model at " + job->path);
  } else {
    auto* model = new Model();
    model->ctx = job->ctx;
    napi_value external;
    napi_create_external(env, model, finalizeModel, nullptr, &external);
    napi_resolve_deferred(env, job->deferred, external);
  }
  napi_delete_async_work(env, job->work);
  delete job;
}

napi_value Load(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  auto* job = new LoadJob();
  job->path = getString(env, argv[0]);
  if (argc > 1) readInt(env, argv[1], "dtwPreset", job->dtwPreset);
  napi_value promise, name;
  CHECK(env, napi_create_promise(env, &job->deferred, &promise));
  CHECK(env, napi_create_string_utf8(env, "voxd_whisper.load", NAPI_AUTO_LENGTH, &name));
  CHECK(env, napi_create_async_work(env, nullptr, name, loadExecute, loadComplete, job, &job->work));
  CHECK(env, napi_queue_async_work(env, job->work));
  return promise;
}

// ---- transcribe(model, samples, options, abortFlag) -> Promise<result>

// whisper_logits_filter_callback for forced alignment: records the next given token's log-probability among the text
// tokens the model could say, then leaves that token (or, once the text is said, the end token) as the only choice.
// Greedy decoding then follows the text, and DTW times its tokens as it times a transcript's.
void forceTokens(whisper_context* ctx, whisper_state*, const whisper_token_data*, int generated, float* logits, void* data) {
  auto* job = static_cast<TranscribeJob*>(data);
  const int vocabulary = whisper_n_vocab(ctx);
  const whisper_token eot = whisper_token_eot(ctx);
  const bool textSaid = generated >= static_cast<int>(job->forcedTokens.size());
  const whisper_token next = textSaid ? eot : job->forcedTokens[generated];
  if (!textSaid) {
    float maximum = -INFINITY;
    for (int i = 0; i < eot; i++) maximum = std::max(maximum, logits[i]);
    double sum = 0;
    for (int i = 0; i < eot; i++) {
      if (logits[i] > -INFINITY) sum += std::exp(logits[i] - maximum);
    }
    const float logProbability = logits[next] > -INFINITY ? logits[next] - maximum - static_cast<float>(std::log(sum)) : -INFINITY;
    if (static_cast<int>(job->forcedLogProbabilities.size()) <= generated) job->forcedLogProbabilities.resize(generated + 1);
    job->forcedLogProbabilities[generated] = logProbability;
  }
  for (int i = 0; i < vocabulary; i++) {
    if (i != next) logits[i] = -INFINITY;
  }
  logits[next] = 0.0f;
}

void transcribeExecute(napi_env, void* data) {
  auto* job = static_cast<TranscribeJob*>(data);
  whisper_context* ctx = job->model->ctx;
  whisper_state* state = job->model->acquireState();
  if (!state) {
    job->error = "whisper.cpp could not allocate a decoding state";
    return;
  }
  // Set on every call: a kept state may come from a call with the other encoder.
  whisper_state_set_encoder(state, job->encoder ? encodeWindow : nullptr, job);
  const int n = static_cast<int>(job->samples.size());
  std::string language = job->language;
  if (language == "auto") {
    if (!whisper_is_multilingual(ctx)) {
      language = "en";
    } else {
      std::vector<float> probabilities(whisper_lang_max_id() + 1, 0.0f);
      // On the context the transcription encodes with, but at least about 5 s: a short clip is then not also encoded as a
      // full 30 s window (1.5 s of CPU for a 1 s clip), and a 1 s clip is not detected on 2.5 s alone (the first second of
      // LDC93S1 came back as Hungarian; right with 256 frames, as were as many 1-2 s excerpts of ../shared/eval/asr, 28
      // of 38, as with the cut context).
      whisper_state_set_detection_audio_ctx(state, job->audioContext > 0 ? std::max(job->audioContext, minDetectionAudioContext) : 0);
      if (whisper_pcm_to_mel_with_state(ctx, state, job->samples.data(), n, job->threads) != 0) {
        job->error = "whisper.cpp could not compute the mel spectrogram";
        job->model->releaseState(state);
        return;
      }
      const int id = whisper_lang_auto_detect_with_state(ctx, state, 0, job->threads, probabilities.data());
      if (id < 0) {
        job->error = job->encoderError.empty() ? "whisper.cpp language detection failed" : "the encoder failed: " + job->encoderError;
        job->model->releaseState(state);
        return;
      }
      language = whisper_lang_str(id);
      job->languageProbability = probabilities[id];
      job->languageProbabilities = std::move(probabilities);
    }
  }
  job->detectedLanguage = language;
  if (job->detectOnly) {
    job->model->releaseState(state);
    return;
  }

  whisper_full_params params = whisper_full_default_params(job->beamSize > 1 ? WHISPER_SAMPLING_BEAM_SEARCH : WHISPER_SAMPLING_GREEDY);
  params.n_threads = job->threads;
  params.no_context = job->noContext;
  params.translate = job->translate;
  params.single_segment = job->singleSegment;
  params.audio_ctx = job->audioContext;
  params.max_tokens = job->maxTokens;
  params.voxd_end_of_audio_margin_ms = job->endOfAudioMarginMs;
  params.print_progress = false;
  params.print_realtime = false;
  params.print_timestamps = false;
  params.print_special = false;
  params.token_timestamps = true;
  params.language = language.c_str();
  params.initial_prompt = job->prompt.empty() ? nullptr : job->prompt.c_str();
  params.temperature = job->temperature;
  params.temperature_inc = job->temperatureIncrement;
  params.entropy_thold = job->entropyThreshold;
  params.logprob_thold = job->logprobThreshold;
  params.no_speech_thold = job->noSpeechThreshold;
  params.suppress_nst = job->suppressNonSpeech;
  params.suppress_blank = job->suppressBlank;
  params.greedy.best_of = job->bestOf;
  params.beam_search.beam_size = job->beamSize;
  params.abort_callback = abortRequested;
  params.abort_callback_user_data = const_cast<int32_t*>(job->abortFlag);
  if (!job->forcedText.empty()) {
    // One greedy pass over the whole (at most 30 s) audio, no timestamp tokens, no fallback: the text is what it says.
    job->forcedTokens.resize(whisper_n_text_ctx(ctx));
    const int count = whisper_tokenize(ctx, job->forcedText.c_str(), job->forcedTokens.data(), static_cast<int>(job->forcedTokens.size()));
    if (count < 0 || count > whisper_n_text_ctx(ctx) / 2 - 8) {
      job->error = "forced text too long for one window (" + std::to_string(count < 0 ? -count : count) + " tokens)";
      job->model->releaseState(state);
      return;
    }
    job->forcedTokens.resize(count);
    params.strategy = WHISPER_SAMPLING_GREEDY;
    params.greedy.best_of = 1;
    params.temperature = 0.0f;
    params.temperature_inc = 0.0f;
    params.no_timestamps = true;
    params.single_segment = true;
    params.suppress_blank = false;
    params.suppress_nst = false;
    params.initial_prompt = nullptr;
    params.max_tokens = 0;
    params.logits_filter_callback = forceTokens;
    params.logits_filter_callback_user_data = job;
  }

  const int status = whisper_full_with_state(ctx, state, params, job->samples.data(), n);
  if (status != 0) {
    job->error = abortRequested(const_cast<int32_t*>(job->abortFlag)) ? "aborted"
                 : !job->encoderError.empty()                                ? "the encoder failed: " + job->encoderError
                                                                             : "whisper.cpp transcription failed (" + std::to_string(status) + ")";
    job->model->releaseState(state);
    return;
  }
  job->acceptedTemperature = whisper_full_temperature_from_state(state);
  const whisper_token eot = whisper_token_eot(ctx);
  const int segments = whisper_full_n_segments_from_state(state);
  size_t forcedIndex = 0;
  for (int s = 0; s < segments; s++) {
    Segment segment;
    segment.t0 = whisper_full_get_segment_t0_from_state(state, s);
    segment.t1 = whisper_full_get_segment_t1_from_state(state, s);
    segment.text = whisper_full_get_segment_text_from_state(state, s);
    segment.noSpeechProbability = whisper_full_get_segment_no_speech_prob_from_state(state, s);
    const int tokens = whisper_full_n_tokens_from_state(state, s);
    double logProbabilitySum = 0;
    for (int t = 0; t < tokens; t++) {
      const whisper_token_data d = whisper_full_get_token_data_from_state(state, s, t);
      if (d.id >= eot) continue;  // special and timestamp tokens carry no text
      Token token{d.id, whisper_full_get_token_text_from_state(ctx, state, s, t), d.p, d.plog, d.t0, d.t1, d.t_dtw};
      // A forced token's own probability is 1: report the model's before forcing.
      if (!job->forcedText.empty() && forcedIndex < job->forcedLogProbabilities.size()) {
        token.plog = job->forcedLogProbabilities[forcedIndex++];
        token.p = std::exp(token.plog);
      }
      segment.tokens.push_back(token);
      logProbabilitySum += d.plog;
    }
    segment.averageLogProbability = segment.tokens.empty() ? 0.0f : static_cast<float>(logProbabilitySum / segment.tokens.size());
    job->segments.push_back(std::move(segment));
  }
  job->model->releaseState(state);
}

void transcribeComplete(napi_env env, napi_status, void* data) {
  auto* job = static_cast<TranscribeJob*>(data);
  if (!job->error.empty()) {
    rejectWith(env, job->deferred, job->error);
  } else {
    napi_value result, segments;
    napi_create_object(env, &result);
    setString(env, result, "language", job->detectedLanguage);
    setNumber(env, result, "languageProbability", job->languageProbability);
    if (!job->languageProbabilities.empty()) {
      napi_value probabilities;
      napi_create_object(env, &probabilities);
      for (size_t id = 0; id < job->languageProbabilities.size(); id++)
        setNumber(env, probabilities, whisper_lang_str(static_cast<int>(id)), job->languageProbabilities[id]);
      napi_set_named_property(env, result, "languageProbabilities", probabilities);
    }
    // Single precision: 0.2 arrives as 0.20000000298.
    setNumber(env, result, "temperature", std::round(job->acceptedTemperature * 1000.0) / 1000.0);
    napi_create_array_with_length(env, job->segments.size(), &segments);
    for (size_t s = 0; s < job->segments.size(); s++) {
      const Segment& segment = job->segments[s];
      napi_value object, tokens;
      napi_create_object(env, &object);
      // whisper.cpp times are in units of 10 ms.
      setNumber(env, object, "startSeconds", segment.t0 / 100.0);
      setNumber(env, object, "endSeconds", segment.t1 / 100.0);
      setString(env, object, "text", segment.text);
      setNumber(env, object, "noSpeechProbability", segment.noSpeechProbability);
      setNumber(env, object, "averageLogProbability", segment.averageLogProbability);
      napi_create_array_with_length(env, segment.tokens.size(), &tokens);
      for (size_t t = 0; t < segment.tokens.size(); t++) {
        const Token& token = segment.tokens[t];
        napi_value tokenObject;
        napi_create_object(env, &tokenObject);
        setNumber(env, tokenObject, "id", token.id);
        // Raw bytes: a token may hold part of a multi-byte character, so text is decoded per word in JS.
        napi_value bytes;
        void* copied = nullptr;
        napi_create_buffer_copy(env, token.text.size(), token.text.data(), &copied, &bytes);
        napi_set_named_property(env, tokenObject, "bytes", bytes);
        setNumber(env, tokenObject, "probability", token.p);
        setNumber(env, tokenObject, "logProbability", token.plog);
        setNumber(env, tokenObject, "startSeconds", token.t0 / 100.0);
        setNumber(env, tokenObject, "endSeconds", token.t1 / 100.0);
        setNumber(env, tokenObject, "dtwSeconds", token.tDtw / 100.0);
        napi_set_element(env, tokens, t, tokenObject);
      }
      napi_set_named_property(env, object, "tokens", tokens);
      napi_set_element(env, segments, s, object);
    }
    napi_set_named_property(env, result, "segments", segments);
    napi_resolve_deferred(env, job->deferred, result);
  }
  napi_delete_reference(env, job->modelRef);
  if (job->abortRef) napi_delete_reference(env, job->abortRef);
  if (job->encoder) napi_release_threadsafe_function(job->encoder, napi_tsfn_release);
  napi_delete_async_work(env, job->work);
  delete job;
}

// The (model, samples) arguments every call starts with: the model kept alive by a reference while the work runs (even if
// JS drops it), the samples copied. False with a JS exception pending when they are not a model and a Float32Array.
bool readModelAndSamples(napi_env env, napi_value model, napi_value samples, Model** modelOut, napi_ref* modelRef, std::vector<float>* samplesOut) {
  void* modelData = nullptr;
  napi_typedarray_type type;
  size_t length = 0;
  void* values = nullptr;
  if (napi_get_value_external(env, model, &modelData) != napi_ok || napi_get_typedarray_info(env, samples, &type, &length, &values, nullptr, nullptr) != napi_ok ||
      type != napi_float32_array) {
    napi_throw_type_error(env, nullptr, "expected a whisper model and its samples as a Float32Array");
    return false;
  }
  if (napi_create_reference(env, model, 1, modelRef) != napi_ok) {
    napi_throw_error(env, nullptr, "voxd_whisper: N-API call failed");
    return false;
  }
  *modelOut = static_cast<Model*>(modelData);
  samplesOut->assign(static_cast<float*>(values), static_cast<float*>(values) + length);
  return true;
}

napi_value Transcribe(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  if (argc < 4) {
    napi_throw_type_error(env, nullptr, "transcribe(model, samples, options, abortFlag, encoder?)");
    return nullptr;
  }
  auto* job = new TranscribeJob();
  if (!readModelAndSamples(env, argv[0], argv[1], &job->model, &job->modelRef, &job->samples)) {
    delete job;
    return nullptr;
  }

  napi_value options = argv[2];
  if (napi_value v = property(env, options, "language")) job->language = getString(env, v);
  if (napi_value v = property(env, options, "prompt")) job->prompt = getString(env, v);
  if (napi_value v = property(env, options, "forcedText")) job->forcedText = getString(env, v);
  readInt(env, options, "threads", job->threads);
  readNumber(env, options, "temperature", job->temperature);
  readNumber(env, options, "temperatureIncrement", job->temperatureIncrement);
  readInt(env, options, "beamSize", job->beamSize);
  readInt(env, options, "bestOf", job->bestOf);
  readNumber(env, options, "entropyThreshold", job->entropyThreshold);
  readNumber(env, options, "logprobThreshold", job->logprobThreshold);
  readNumber(env, options, "noSpeechThreshold", job->noSpeechThreshold);
  readBool(env, options, "suppressNonSpeech", job->suppressNonSpeech);
  readBool(env, options, "suppressBlank", job->suppressBlank);
  readBool(env, options, "translate", job->translate);
  readBool(env, options, "noContext", job->noContext);
  readBool(env, options, "singleSegment", job->singleSegment);
  readInt(env, options, "audioContext", job->audioContext);
  readInt(env, options, "maxTokens", job->maxTokens);
  readInt(env, options, "endOfAudioMarginMs", job->endOfAudioMarginMs);
  readBool(env, options, "detectOnly", job->detectOnly);

  napi_typedarray_type type;
  size_t length = 0;
  void* flag = nullptr;
  CHECK(env, napi_get_typedarray_info(env, argv[3], &type, &length, &flag, nullptr, nullptr));
  if (type != napi_int32_array || length < 1) {
    napi_throw_type_error(env, nullptr, "abortFlag must be an Int32Array");
    return nullptr;
  }
  job->abortFlag = static_cast<volatile int32_t*>(flag);
  CHECK(env, napi_create_reference(env, argv[3], 1, &job->abortRef));

  napi_valuetype encoderType = napi_undefined;
  if (argc > 4) CHECK(env, napi_typeof(env, argv[4], &encoderType));
  if (encoderType == napi_function) {
    napi_value encoderName;
    CHECK(env, napi_create_string_utf8(env, "voxd_whisper.encoder", NAPI_AUTO_LENGTH, &encoderName));
    CHECK(env, napi_create_threadsafe_function(env, argv[4], nullptr, encoderName, 0, 1, nullptr, nullptr, nullptr, callEncoder, &job->encoder));
    void* closing = nullptr;
    CHECK(env, napi_get_instance_data(env, &closing));
    job->environmentClosing = *static_cast<ClosingFlag*>(closing);
  }

  napi_value promise, name;
  CHECK(env, napi_create_promise(env, &job->deferred, &promise));
  CHECK(env, napi_create_string_utf8(env, "voxd_whisper.transcribe", NAPI_AUTO_LENGTH, &name));
  CHECK(env, napi_create_async_work(env, nullptr, name, transcribeExecute, transcribeComplete, job, &job->work));
  CHECK(env, napi_queue_async_work(env, job->work));
  return promise;
}

// ---- encode(model, samples, { threads }) -> Promise<{ mel, frames, embedding }>: whisper.cpp's own encoder output for
// the first (full) window and the mel it read, what an external encoder must reproduce.

struct EncodeJob {
  napi_async_work work = nullptr;
  napi_deferred deferred = nullptr;
  napi_ref modelRef = nullptr;
  Model* model = nullptr;
  std::vector<float> samples;
  int threads = 2;
  std::vector<float> mel;
  int frames = 0;
  std::vector<float> embedding;
  std::string error;
};

bool captureMel(const float* mel, int melBins, int frames, float* embd, int context, int state, void* data) {
  auto* job = static_cast<EncodeJob*>(data);
  job->mel.assign(mel, mel + static_cast<size_t>(melBins) * frames);
  job->frames = frames;
  std::fill(embd, embd + static_cast<size_t>(context) * state, 0.0f);
  return true;
}

void encodeExecute(napi_env, void* data) {
  auto* job = static_cast<EncodeJob*>(data);
  whisper_context* ctx = job->model->ctx;
  // A fresh state: its encoder context is the full window.
  whisper_state* state = whisper_init_state(ctx);
  if (!state) {
    job->error = "whisper.cpp could not allocate a decoding state";
    return;
  }
  bool ok = whisper_pcm_to_mel_with_state(ctx, state, job->samples.data(), static_cast<int>(job->samples.size()), job->threads) == 0;
  // The mel through the external encoder path, then whisper.cpp's own encoder on the same window.
  whisper_state_set_encoder(state, captureMel, job);
  ok = ok && whisper_encode_with_state(ctx, state, 0, job->threads) == 0;
  whisper_state_set_encoder(state, nullptr, nullptr);
  ok = ok && whisper_encode_with_state(ctx, state, 0, job->threads) == 0;
  if (ok) {
    job->embedding.resize(whisper_state_encoder_output(state, nullptr, 0));
    whisper_state_encoder_output(state, job->embedding.data(), static_cast<int>(job->embedding.size()));
  } else {
    job->error = "whisper.cpp could not encode the audio";
  }
  whisper_free_state(state);
}

void encodeComplete(napi_env env, napi_status, void* data) {
  auto* job = static_cast<EncodeJob*>(data);
  if (!job->error.empty()) {
    rejectWith(env, job->deferred, job->error);
  } else {
    napi_value result;
    napi_create_object(env, &result);
    napi_set_named_property(env, result, "mel", floatArray(env, job->mel));
    setNumber(env, result, "frames", job->frames);
    napi_set_named_property(env, result, "embedding", floatArray(env, job->embedding));
    napi_resolve_deferred(env, job->deferred, result);
  }
  napi_delete_reference(env, job->modelRef);
  napi_delete_async_work(env, job->work);
  delete job;
}

napi_value Encode(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  if (argc < 3) {
    napi_throw_type_error(env, nullptr, "encode(model, samples, options)");
    return nullptr;
  }
  auto* job = new EncodeJob();
  if (!readModelAndSamples(env, argv[0], argv[1], &job->model, &job->modelRef, &job->samples)) {
    delete job;
    return nullptr;
  }
  readInt(env, argv[2], "threads", job->threads);
  napi_value promise, name;
  CHECK(env, napi_create_promise(env, &job->deferred, &promise));
  CHECK(env, napi_create_string_utf8(env, "voxd_whisper.encode", NAPI_AUTO_LENGTH, &name));
  CHECK(env, napi_create_async_work(env, nullptr, name, encodeExecute, encodeComplete, job, &job->work));
  CHECK(env, napi_queue_async_work(env, job->work));
  return promise;
}

napi_value Info(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  void* data = nullptr;
  CHECK(env, napi_get_value_external(env, argv[0], &data));
  whisper_context* ctx = static_cast<Model*>(data)->ctx;
  napi_value result, multilingual;
  napi_create_object(env, &result);
  napi_get_boolean(env, whisper_is_multilingual(ctx) != 0, &multilingual);
  napi_set_named_property(env, result, "multilingual", multilingual);
  setString(env, result, "type", whisper_model_type_readable(ctx));
  setNumber(env, result, "vocabularySize", whisper_n_vocab(ctx));
  setNumber(env, result, "textLayers", whisper_model_n_text_layer(ctx));
  return result;
}

void closeEnvironment(void* data) {
  **static_cast<ClosingFlag*>(data) = true;
}

// closing(): what the cleanup hook does, for process.exit(), which joins the libuv threads without running the hooks.
napi_value Closing(napi_env env, napi_callback_info) {
  void* closing = nullptr;
  if (napi_get_instance_data(env, &closing) == napi_ok && closing) closeEnvironment(closing);
  return nullptr;
}

void deleteClosingFlag(napi_env, void* data, void*) {
  delete static_cast<ClosingFlag*>(data);
}

napi_value Init(napi_env env, napi_value exports) {
  whisper_log_set(silentLog, nullptr);
  auto* closing = new ClosingFlag(std::make_shared<std::atomic<bool>>(false));
  napi_set_instance_data(env, closing, deleteClosingFlag, nullptr);
  napi_add_env_cleanup_hook(env, closeEnvironment, closing);
  napi_property_descriptor properties[] = {
      {"load", nullptr, Load, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"transcribe", nullptr, Transcribe, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"info", nullptr, Info, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"encode", nullptr, Encode, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"closing", nullptr, Closing, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
