// What the command families share: this thread's DbSlice, a per-thread scratch string for
// decoding values into replies, and the one way an OpStatus becomes a reply.
//
// Thread-safety: Slice() and Scratch() are this thread's; call them on the thread that
// runs the shard code (a handler on its keys' shard, or a hop).
#pragma once

#include <string>

#include "src/facade/conn_context.h"
#include "src/facade/reply_builder.h"
#include "src/server/engine_shard.h"
#include "src/server/op_status.h"

namespace damselfly {

// This thread's shard's DbSlice. REQUIRES: a shard thread.
inline DbSlice& Slice() { return EngineShard::tlocal()->db_slice(); }

// Where values stored as integers, packed or compressed are decoded for a reply; one
// per thread, so decoding allocates nothing once it has grown.
inline std::string& Scratch() {
  static thread_local std::string scratch;
  return scratch;
}

// Replies the error of `status` (see OpStatusError). REQUIRES: an error status.
inline void SendOpError(facade::ReplyBuilder* rb, OpStatus status) {
  rb->SendError(OpStatusError(status));
}

// For a read of a key that may be missing: replies the error of `status` unless it is
// kOk or kKeyNotFound (which the caller answers as for an empty key). Returns whether it
// replied.
inline bool ReplyIfError(facade::ReplyBuilder* rb, OpStatus status) {
  if (status == OpStatus::kOk || status == OpStatus::kKeyNotFound) return false;
  SendOpError(rb, status);
  return true;
}

}  // namespace damselfly
