#include "src/server/collection_limits.h"

#include <gflags/gflags.h>

DEFINE_int64(list_max_listpack_size, -2,
             "Elements per quicklist node (> 0), or its size limit: -1..-5 for 4, 8, 16, 32 or "
             "64 KiB (Redis's list-max-listpack-size)");
DEFINE_int64(list_compress_depth, 0,
             "Quicklist nodes left uncompressed at each end of a list; 0: no compression");
DEFINE_uint64(hash_max_listpack_entries, 512,
              "Fields a hash keeps in its small encoding (at most 4095, the pack's limit)");
DEFINE_uint64(hash_max_listpack_value, 64, "Longest field or value a listpack hash holds");
DEFINE_uint64(set_max_intset_entries, 512, "Integers a set keeps in an intset");
DEFINE_uint64(set_max_listpack_entries, 128, "Members a set of strings keeps in a listpack");
DEFINE_uint64(set_max_listpack_value, 64, "Longest member a listpack set holds");
DEFINE_uint64(zset_max_listpack_entries, 128,
              "Members a sorted set keeps in its small encoding (at most 4095, the pack's limit)");
DEFINE_uint64(zset_max_listpack_value, 64, "Longest member a listpack sorted set holds");
DEFINE_uint64(stream_node_max_bytes, 4096, "Bytes of a stream's listpack node; 0: no limit");
DEFINE_uint64(stream_node_max_entries, 100, "Entries of a stream's listpack node; 0: no limit");
DEFINE_uint64(hll_sparse_max_bytes, 3000, "Bytes past which a sparse HyperLogLog turns dense");

namespace damselfly {

void InitCollectionLimits() {
  using namespace collection_limits_internal;
  list_max_listpack_size = FLAGS_list_max_listpack_size;
  list_compress_depth = FLAGS_list_compress_depth;
  hash_max_listpack_entries = FLAGS_hash_max_listpack_entries;
  hash_max_listpack_value = FLAGS_hash_max_listpack_value;
  set_max_intset_entries = FLAGS_set_max_intset_entries;
  set_max_listpack_entries = FLAGS_set_max_listpack_entries;
  set_max_listpack_value = FLAGS_set_max_listpack_value;
  zset_max_listpack_entries = FLAGS_zset_max_listpack_entries;
  zset_max_listpack_value = FLAGS_zset_max_listpack_value;
  stream_node_max_bytes = FLAGS_stream_node_max_bytes;
  stream_node_max_entries = FLAGS_stream_node_max_entries;
  hll_sparse_max_bytes = FLAGS_hll_sparse_max_bytes;
}

}  // namespace damselfly
