// The attributes of the rows handlers (PfftC2CRows, PfftC2CRowsInto), the same in the
// CPU and the GPU library: appended to a binding after its buffers.
//   axes       the transformed axes, counted from the end
//   forward    true: the exp(-2 pi i jk/n) sign
//   scale      multiplies the rows written
//   nthreads   CPU threads (0: DUCC's default; the GPU ignores it)
//   axis       the rows' axis, counted from the end, right after the transformed ones
//   in_start   the first row read from the input
//   out_start  the first row written in the output
#pragma once

#define PFFT_ROWS_ATTRS                       \
  .Attr<ffi::Span<const int64_t>>("axes")     \
      .Attr<bool>("forward")                  \
      .Attr<double>("scale")                  \
      .Attr<int64_t>("nthreads")              \
      .Attr<int64_t>("axis")                  \
      .Attr<int64_t>("in_start")              \
      .Attr<int64_t>("out_start")
