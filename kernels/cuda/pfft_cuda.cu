// pfft GPU engine: XLA FFI handlers running cuFFT on any axes of a row-major block.
//
// Same targets and attributes as kernels/cpu/pfft_cpu.cc (axes counted from the end,
// forward, scale, nthreads [ignored here]):
//   PfftC2C  complex -> complex; in place when XLA aliases output to input
//   PfftR2C  real -> complex, the last listed axis halved
//   PfftC2R  complex -> real, the last listed axis of n real points
//
// How an axis set becomes cuFFT calls is kernels/common/cufft_schedule.h, pure C++ that
// kernels/common/cufft_schedule_test.cc checks on the CPU: runs of up to three adjacent
// axes, each one cufftPlanMany over one batch dimension and a loop of launches over the
// other; real transforms as a rank-1 R2C/C2R plan on the halved axis and C2C on the rest;
// the sign cuFFT lacks for real transforms as a conjugation, fused into the scaling pass
// (R2C) or into the input copy C2R needs anyway (cuFFT overwrites a C2R input). This
// file only executes such a schedule.
//
// Plans live in a cache keyed by (type, geometry, device, stream) behind a mutex;
// each plan has its own mutex for set-stream / set-work-area / exec. Work areas
// come from XLA's ScratchAllocator (cufftSetAutoAllocation(0) + cufftSetWorkArea).

#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <cstdlib>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "../common/cufft_schedule.h"
#include "../common/lru_cache.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// ---------------------------------------------------------------- errors

std::string CufftName(cufftResult r) { return "cuFFT error " + std::to_string(static_cast<int>(r)); }

#define PFFT_CUFFT(expr)                                                         \
  do {                                                                           \
    cufftResult _r = (expr);                                                     \
    if (_r != CUFFT_SUCCESS)                                                     \
      return ffi::Error::Internal(std::string(#expr) + ": " + CufftName(_r));    \
  } while (0)

#define PFFT_CUDA(expr)                                                          \
  do {                                                                           \
    cudaError_t _e = (expr);                                                     \
    if (_e != cudaSuccess)                                                       \
      return ffi::Error::Internal(std::string(#expr) + ": " + cudaGetErrorString(_e)); \
  } while (0)

#define PFFT_TRY(expr)                                                           \
  do {                                                                           \
    ffi::Error _err = (expr);                                                    \
    if (_err.failure()) return _err;                                             \
  } while (0)

// ---------------------------------------------------------------- plan cache

struct PlanKey {
  cufftType type;
  int rank;
  std::array<long long, 3> n;
  long long istride, idist, ostride, odist, batch;
  int device;
  cudaStream_t stream;
  auto tie() const {
    return std::tie(type, rank, n, istride, idist, ostride, odist, batch, device, stream);
  }
  bool operator<(const PlanKey &o) const { return tie() < o.tie(); }
};

struct Plan {
  cufftHandle handle = 0;
  size_t work_size = 0;
  std::mutex mu;  // guards set-stream / set-work-area / exec on this handle
  ~Plan() { if (handle) cufftDestroy(handle); }
};

// A bounded LRU (kernels/common/lru_cache.h): at most 64 plans unless
// $PFFT_CUFFT_PLAN_CACHE or pfft_cuda_set_plan_cache_size says otherwise. An evicted
// plan that a call still holds (shared_ptr) lives until that call ends.
pfft::LruCache<PlanKey, Plan> &Cache() {
  static auto *cache = new pfft::LruCache<PlanKey, Plan>([] {
    const char *env = std::getenv("PFFT_CUFFT_PLAN_CACHE");
    long v = env ? std::strtol(env, nullptr, 10) : 64;
    return static_cast<size_t>(v > 0 ? v : 64);
  }());  // never destroyed: no cufftDestroy after the CUDA runtime has shut down at exit
  return *cache;
}

ffi::Error GetPlan(const PlanKey &key, std::shared_ptr<Plan> &out) {
  out = Cache().Get(key);
  if (out) return ffi::Error::Success();
  auto plan = std::make_shared<Plan>();  // made outside the cache's lock
  PFFT_CUFFT(cufftCreate(&plan->handle));
  PFFT_CUFFT(cufftSetAutoAllocation(plan->handle, 0));
  std::array<long long, 3> n = key.n, embed = key.n;
  PFFT_CUFFT(cufftMakePlanMany64(plan->handle, key.rank, n.data(), embed.data(), key.istride,
                                 key.idist, embed.data(), key.ostride, key.odist, key.type,
                                 key.batch, &plan->work_size));
  out = Cache().Put(key, plan);
  return ffi::Error::Success();
}

// ---------------------------------------------------------------- elementwise kernels

template <typename T>
__global__ void ScaleConj(T *x, long long count, double scale, bool conj) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    T v = x[i];
    v.x = v.x * scale;
    v.y = (conj ? -v.y : v.y) * scale;
    x[i] = v;
  }
}

template <typename T>
__global__ void Scale(T *x, long long count, double scale) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x)
    x[i] = x[i] * scale;
}

template <typename T>
__global__ void CopyConj(const T *in, T *out, long long count) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    T v = in[i];
    v.y = -v.y;
    out[i] = v;
  }
}

unsigned Blocks(long long count) {
  return static_cast<unsigned>(std::min<long long>((count + 255) / 256, 65535));
}

// ---------------------------------------------------------------- execution

namespace cs = pfft::cufft_schedule;
static_assert(cs::kForward == CUFFT_FORWARD && cs::kInverse == CUFFT_INVERSE,
              "cufft_schedule's signs are cuFFT's");

cufftType TypeOf(cs::Kind kind, bool dbl) {
  switch (kind) {
    case cs::Kind::kR2C: return dbl ? CUFFT_D2Z : CUFFT_R2C;
    case cs::Kind::kC2R: return dbl ? CUFFT_Z2D : CUFFT_C2R;
    default: return dbl ? CUFFT_Z2Z : CUFFT_C2C;
  }
}

// One step of a schedule (kernels/common/cufft_schedule.h): a plan from the cache and
// its loop of launches, the work area from XLA's scratch allocator.
ffi::Error ExecStep(cudaStream_t stream, ffi::ScratchAllocator &scratch, bool dbl,
                    const cs::Step &step, const void *in, void *out) {
  const cs::Layout &l = step.layout;
  size_t real = dbl ? sizeof(double) : sizeof(float), cplx = 2 * real;
  size_t in_elem = step.kind == cs::Kind::kR2C ? real : cplx;
  size_t out_elem = step.kind == cs::Kind::kC2R ? real : cplx;
  PlanKey key{};
  key.type = TypeOf(step.kind, dbl);
  key.rank = l.rank;
  key.n = l.n;
  key.istride = l.istride;
  key.idist = l.idist;
  key.ostride = l.ostride;
  key.odist = l.odist;
  key.batch = l.batch;
  PFFT_CUDA(cudaGetDevice(&key.device));
  key.stream = stream;
  std::shared_ptr<Plan> plan;
  PFFT_TRY(GetPlan(key, plan));
  std::lock_guard<std::mutex> lock(plan->mu);
  PFFT_CUFFT(cufftSetStream(plan->handle, stream));
  if (plan->work_size > 0) {
    auto work = scratch.Allocate(plan->work_size, 256);
    if (!work.has_value()) return ffi::Error::Internal("pfft: no scratch for cuFFT work area");
    PFFT_CUFFT(cufftSetWorkArea(plan->handle, *work));
  }
  auto *src = static_cast<char *>(const_cast<void *>(in));
  auto *dst = static_cast<char *>(out);
  for (long long k = 0; k < l.loops; ++k) {
    void *i = src + k * l.in_step * in_elem;
    void *o = dst + k * l.out_step * out_elem;
    switch (key.type) {
      case CUFFT_C2C:
        PFFT_CUFFT(cufftExecC2C(plan->handle, (cufftComplex *)i, (cufftComplex *)o,
                                step.direction));
        break;
      case CUFFT_Z2Z:
        PFFT_CUFFT(cufftExecZ2Z(plan->handle, (cufftDoubleComplex *)i, (cufftDoubleComplex *)o,
                                step.direction));
        break;
      case CUFFT_R2C:
        PFFT_CUFFT(cufftExecR2C(plan->handle, (cufftReal *)i, (cufftComplex *)o));
        break;
      case CUFFT_D2Z:
        PFFT_CUFFT(cufftExecD2Z(plan->handle, (cufftDoubleReal *)i, (cufftDoubleComplex *)o));
        break;
      case CUFFT_C2R:
        PFFT_CUFFT(cufftExecC2R(plan->handle, (cufftComplex *)i, (cufftReal *)o));
        break;
      case CUFFT_Z2D:
        PFFT_CUFFT(cufftExecZ2D(plan->handle, (cufftDoubleComplex *)i, (cufftDoubleReal *)o));
        break;
      default:
        return ffi::Error::Internal("pfft: unknown cuFFT type");
    }
  }
  return ffi::Error::Success();
}

std::vector<long long> Dims(ffi::Span<const int64_t> d) { return {d.begin(), d.end()}; }

// The element types a kind takes: complex64/complex128 in and out (C2C), float32/64 ->
// complex64/128 (R2C), the reverse (C2R). Sets `dbl`; the error, or nullptr where they fit.
const char *TypesError(cs::Kind kind, ffi::DataType in, ffi::DataType out, bool &dbl) {
  using T = ffi::DataType;
  switch (kind) {
    case cs::Kind::kC2C:
      dbl = in == T::C128;
      return (in == T::C64 || in == T::C128) && out == in
                 ? nullptr : "pfft c2c: complex64 or complex128 only";
    case cs::Kind::kR2C:
      dbl = in == T::F64;
      return (in == T::F32 && out == T::C64) || (in == T::F64 && out == T::C128)
                 ? nullptr : "pfft r2c: float32->complex64 or float64->complex128";
    case cs::Kind::kC2R:
      dbl = in == T::C128;
      return (in == T::C64 && out == T::F32) || (in == T::C128 && out == T::F64)
                 ? nullptr : "pfft c2r: complex64->float32 or complex128->float64";
  }
  return "pfft: unknown transform kind";
}

// The three handlers: check the buffers, make the schedule, run it on the stream.
// C2C runs in place when XLA aliases the output to the input (donated).
ffi::Error Transform(cs::Kind kind, cudaStream_t stream, ffi::ScratchAllocator &scratch,
                     ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                     ffi::Span<const int64_t> axes, bool forward, double scale) {
  bool dbl = false;
  if (const char *types = TypesError(kind, x.element_type(), y->element_type(), dbl))
    return ffi::Error::InvalidArgument(types);
  auto din = Dims(x.dimensions()), dout = Dims(y->dimensions());
  std::vector<int> ax;
  std::string err = cs::ResolveAxes(axes.begin(), axes.size(), int(din.size()), ax);
  cs::Schedule s;
  if (err.empty()) err = cs::MakeSchedule(kind, din, dout, ax, forward, scale, s);
  if (!err.empty()) return ffi::Error::InvalidArgument(err);
  if (s.steps.empty()) return ffi::Error::Success();  // an empty block
  long long count_in = static_cast<long long>(x.element_count());
  void *tmp = nullptr;
  if (s.copy_to_tmp) {  // C2R: cuFFT overwrites its input
    auto t = scratch.Allocate(x.size_bytes(), 256);
    if (!t.has_value()) return ffi::Error::Internal("pfft c2r: no scratch for the input copy");
    tmp = *t;
    if (s.conj_copy && dbl)
      CopyConj<cufftDoubleComplex><<<Blocks(count_in), 256, 0, stream>>>(
          static_cast<const cufftDoubleComplex *>(x.untyped_data()),
          static_cast<cufftDoubleComplex *>(tmp), count_in);
    else if (s.conj_copy)
      CopyConj<cufftComplex><<<Blocks(count_in), 256, 0, stream>>>(
          static_cast<const cufftComplex *>(x.untyped_data()), static_cast<cufftComplex *>(tmp),
          count_in);
    else
      PFFT_CUDA(cudaMemcpyAsync(tmp, x.untyped_data(), x.size_bytes(), cudaMemcpyDeviceToDevice,
                                stream));
  }
  auto buffer = [&](cs::Buffer b) -> void * {
    return b == cs::Buffer::kIn ? x.untyped_data() : b == cs::Buffer::kOut ? y->untyped_data()
                                                                           : tmp;
  };
  for (const cs::Step &step : s.steps)
    PFFT_TRY(ExecStep(stream, scratch, dbl, step, buffer(step.src), buffer(step.dst)));
  long long count_out = static_cast<long long>(y->element_count());
  void *out = y->untyped_data();
  if (kind == cs::Kind::kC2R) {
    if (s.scale != 1.0 && dbl)
      Scale<double><<<Blocks(count_out), 256, 0, stream>>>(static_cast<double *>(out),
                                                            count_out, s.scale);
    else if (s.scale != 1.0)
      Scale<float><<<Blocks(count_out), 256, 0, stream>>>(static_cast<float *>(out), count_out,
                                                           s.scale);
  } else if (s.scale != 1.0 || s.conj_out) {
    if (dbl)
      ScaleConj<cufftDoubleComplex><<<Blocks(count_out), 256, 0, stream>>>(
          static_cast<cufftDoubleComplex *>(out), count_out, s.scale, s.conj_out);
    else
      ScaleConj<cufftComplex><<<Blocks(count_out), 256, 0, stream>>>(
          static_cast<cufftComplex *>(out), count_out, s.scale, s.conj_out);
  }
  PFFT_CUDA(cudaGetLastError());
  return ffi::Error::Success();
}

template <cs::Kind kKind>
ffi::Error Handler(cudaStream_t stream, ffi::ScratchAllocator scratch, ffi::AnyBuffer x,
                   ffi::Result<ffi::AnyBuffer> y, ffi::Span<const int64_t> axes, bool forward,
                   double scale, int64_t /*nthreads: CPU only*/) {
  return Transform(kKind, stream, scratch, x, y, axes, forward, scale);
}

}  // namespace

#define PFFT_BIND                                      \
  ffi::Ffi::Bind()                                     \
      .Ctx<ffi::PlatformStream<cudaStream_t>>()        \
      .Ctx<ffi::ScratchAllocator>()                    \
      .Arg<ffi::AnyBuffer>()                           \
      .Ret<ffi::AnyBuffer>()                           \
      .Attr<ffi::Span<const int64_t>>("axes")          \
      .Attr<bool>("forward")                           \
      .Attr<double>("scale")                           \
      .Attr<int64_t>("nthreads")

#pragma GCC visibility push(default)
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2C, Handler<cs::Kind::kC2C>, PFFT_BIND);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftR2C, Handler<cs::Kind::kR2C>, PFFT_BIND);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2R, Handler<cs::Kind::kC2R>, PFFT_BIND);

extern "C" int pfft_cuda_abi_version() { return 1; }
// the plan cache: its size now and its bound (for tests and users)
extern "C" long pfft_cuda_plan_cache_size() {
  return static_cast<long>(Cache().size());
}
extern "C" long pfft_cuda_plan_cache_limit() {
  return static_cast<long>(Cache().limit());
}
extern "C" void pfft_cuda_set_plan_cache_size(long limit) {
  Cache().set_limit(static_cast<size_t>(limit > 0 ? limit : 1));
}
#pragma GCC visibility pop
