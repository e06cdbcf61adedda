#include "src/facade/resp_connection.h"

#include <gflags/gflags.h>

#include <atomic>
#include <utility>

DEFINE_uint64(proto_max_bulk_len, 512ull << 20, "Largest bulk string a request may carry");

namespace damselfly::facade {

namespace {
std::atomic<uint64_t> next_connection_id{1};
}  // namespace

bool ConnectionContext::Flush() { return owner_->Flush(); }

void ConnectionContext::SetReplyMode(ReplyMode mode) {
  switch (mode) {
    case ReplyMode::kOn:
      reply_filter_ &= ~(kOff | kSkipThis);  // ON's own +OK goes out
      break;
    case ReplyMode::kOff:
      reply_filter_ |= kOff;
      break;
    case ReplyMode::kSkip:
      if (!(reply_filter_ & kOff)) reply_filter_ |= kSkipNext;
      break;
  }
}

void ConnectionContext::FilterReply(size_t output_before) {
  if (reply_filter_ & (kOff | kSkipThis)) reply_builder_.TruncateOutput(output_before);
  reply_filter_ = (reply_filter_ & kOff) | ((reply_filter_ & kSkipNext) ? kSkipThis : 0);
}

RespConnection::RespConnection(ServiceInterface* service, bool requires_auth,
                               const HttpRouter* http)
    : service_(service),
      context_(this, next_connection_id.fetch_add(1, std::memory_order_relaxed)),
      parser_(RespParser::Limits{.max_bulk_len = FLAGS_proto_max_bulk_len}),
      requires_auth_(requires_auth),
      http_(http) {
  context_.authenticated = !requires_auth;
}

RespConnection::~RespConnection() = default;

void RespConnection::ReleaseIdleMemory() {
  context_.reply_builder()->ReleaseOutput();
  parser_.ShrinkArgs();
  // Swapped with empty vectors: `v = {}` assigns an empty list and keeps the memory.
  decltype(batch_args_)().swap(batch_args_);
  decltype(batch_)().swap(batch_);
  decltype(batch_lists_)().swap(batch_lists_);
}

bool RespConnection::ProcessInput() {
  if (http_) {  // the first bytes tell whether the client speaks HTTP instead
    HttpProbe probe = ProbeHttp(input());
    if (probe == HttpProbe::kNeedMore) return true;
    const HttpRouter* http = std::exchange(http_, nullptr);
    if (probe == HttpProbe::kHttp) {
      ServeHttp(*http, socket(), input());
      return false;
    }
  }
  batch_args_.clear();
  batch_.clear();
  bool keep_open = true;
  auto dispatch = [&] {
    if (batch_.empty()) return;
    batch_lists_.clear();
    for (auto [begin, end] : batch_) batch_lists_.emplace_back(&batch_args_[begin], end - begin);
    service_->DispatchMany(batch_lists_, &context_);  // clears context_.current_args
    batch_args_.clear();
    batch_.clear();
  };

  while (!input().empty() && !context_.close_after_reply) {
    // Until the client has authenticated, each command runs before the next is parsed:
    // an AUTH earlier in the same write lifts the unauthenticated limits for the rest.
    const bool unauthenticated = requires_auth_ && !context_.authenticated;
    parser_.set_unauthenticated(unauthenticated);
    size_t consumed = 0;
    RespParser::Result result = parser_.Parse(input(), &consumed);
    if (result == RespParser::Result::kNeedMore) break;
    if (result == RespParser::Result::kError) {
      dispatch();
      context_.reply_builder()->SendError(parser_.error());
      keep_open = false;
      break;
    }
    Consume(consumed);
    if (result == RespParser::Result::kSkipped) continue;

    CmdArgList args = parser_.args();
    if (args.size() > RespParser::kRetainedArgs) {
      // A big command (MSET of a million pairs) runs alone, from the parser's own list
      // rather than a copy of it, which the parser then frees.
      dispatch();
      batch_lists_.assign(1, args);
      service_->DispatchMany(batch_lists_, &context_);
      parser_.ShrinkArgs();
      continue;
    }
    size_t begin = batch_args_.size();
    batch_args_.insert(batch_args_.end(), args.begin(), args.end());
    batch_.emplace_back(begin, batch_args_.size());
    // Unescaped inline arguments live in the parser and the next Parse reuses that
    // space: such a command cannot wait in the batch either.
    bool run_now = unauthenticated;
    for (std::string_view arg : args) run_now |= !InBuffer(arg);
    if (run_now) dispatch();
  }
  dispatch();
  return keep_open && !context_.close_after_reply;
}

}  // namespace damselfly::facade
