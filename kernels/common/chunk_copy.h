// The geometry of the chunk copy (PfftTakeChunks), the same in the CPU and the GPU
// library.
//
// A block is seen as (outer, chunks, chunk, inner): an axis of chunks * chunk points with
// `outer` points of the axes before it and `inner` bytes after it. Points start..start +
// width of every chunk make a piece laid out as (chunks, outer, width, inner): the chunk
// axis first, as an all-to-all sends it (its chunk j to device j) and receives it (from
// device j). The copy is runs of width * inner contiguous bytes on both sides.
#pragma once

#include <cstdint>
#include <string>

namespace pfft {

struct ChunkCopy {
  long long outer = 0, chunks = 0, chunk = 0, start = 0, width = 0, inner = 0;  // inner: bytes

  // The byte offset of run (j, o) in the block and in the piece.
  long long BlockOffset(long long j, long long o) const {
    return ((o * chunks + j) * chunk + start) * inner;
  }
  long long PieceOffset(long long j, long long o) const {
    return (j * outer + o) * width * inner;
  }
  long long RunBytes() const { return width * inner; }
};

// Fills `g` for a block of `block_bytes` and a piece of `piece_bytes` (`same_type`:
// whether the two hold one element type); an error message, empty where the geometry is
// consistent.
inline std::string MakeChunkCopy(bool same_type, long long block_bytes, long long piece_bytes,
                                 int64_t outer, int64_t chunks, int64_t chunk, int64_t start,
                                 int64_t width, ChunkCopy &g) {
  if (!same_type) return "the piece's type is not the block's";
  if (outer < 1 || chunks < 1 || chunk < 1 || width < 0 || start < 0 || start + width > chunk)
    return "points " + std::to_string(start) + ".." + std::to_string(start + width) +
           " of chunks of " + std::to_string(chunk) + " (" + std::to_string(chunks) +
           " chunks, " + std::to_string(outer) + " outer points)";
  long long runs = static_cast<long long>(outer) * chunks * chunk;
  if (block_bytes % runs != 0) return "the block is not a whole number of chunk rows";
  g.outer = outer;
  g.chunks = chunks;
  g.chunk = chunk;
  g.start = start;
  g.width = width;
  g.inner = block_bytes / runs;
  if (piece_bytes != static_cast<long long>(outer) * chunks * width * g.inner)
    return "the piece's size does not match the block's chunks";
  return "";
}

}  // namespace pfft
