// The attributes of the rows handlers (PfftC2CRows, PfftC2CRowsInto) and of the chunk
// copy (PfftTakeChunks), the same in the CPU and the GPU library:
// appended to a binding after its buffers.
//   axes       the transformed axes, counted from the end
//   forward    true: the exp(-2 pi i jk/n) sign
//   scale      multiplies the rows written
//   nthreads   CPU threads (0: DUCC's default; the GPU ignores it)
//   axis       the rows' axis, counted from the end, right after the transformed ones
//   in_start   the first row read from the input
//   out_start  the first row written in the output
//   out_shape  the output seen as this shape (the same number of elements; empty: its own)
#pragma once

#define PFFT_ROWS_ATTRS                       \
  .Attr<ffi::Span<const int64_t>>("axes")     \
      .Attr<bool>("forward")                  \
      .Attr<double>("scale")                  \
      .Attr<int64_t>("nthreads")              \
      .Attr<int64_t>("axis")                  \
      .Attr<int64_t>("in_start")              \
      .Attr<int64_t>("out_start")             \
      .Attr<ffi::Span<const int64_t>>("out_shape")

// outer, chunks, chunk, start, width: the chunk copy's geometry (common/chunk_copy.h)
#define PFFT_CHUNK_ATTRS                      \
  .Attr<int64_t>("outer")                     \
      .Attr<int64_t>("chunks")                \
      .Attr<int64_t>("chunk")                 \
      .Attr<int64_t>("start")                 \
      .Attr<int64_t>("width")
