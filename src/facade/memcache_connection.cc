#include "src/facade/memcache_connection.h"

#include <utility>

#include "src/facade/memcache_auth.h"

namespace damselfly::facade {

bool MemcacheContext::Flush() { return owner_->Flush(); }

MemcacheConnection::MemcacheConnection(MemcacheServiceInterface* service,
                                       MemcacheParser::Limits limits, std::string password)
    : service_(service),
      context_(this),
      parser_(limits),
      password_(std::move(password)),
      authenticated_(password_.empty()) {}

MemcacheConnection::~MemcacheConnection() = default;

void MemcacheConnection::ReleaseIdleMemory() {
  std::string().swap(context_.out());
  // Swapped with empty vectors: `v = {}` assigns an empty list and keeps the memory.
  decltype(batch_)().swap(batch_);
  decltype(batch_offsets_)().swap(batch_offsets_);
  decltype(batch_keys_)().swap(batch_keys_);
  decltype(batch_flags_)().swap(batch_flags_);
}

bool MemcacheConnection::Authenticate() {
  while (!authenticated_ && !input().empty()) {
    MemcacheAuthStep step = ParseMemcacheAuth(input(), password_);
    if (step.kind == MemcacheAuthStep::Kind::kNeedMore) return true;
    if (step.kind == MemcacheAuthStep::Kind::kClose) return false;
    Consume(step.consumed);
    context_.out().append(step.reply).append("\r\n");
    authenticated_ = step.kind == MemcacheAuthStep::Kind::kAuthenticated;
    if (step.attempt) service_->OnMemcacheAuth(authenticated_);
  }
  return true;
}

bool MemcacheConnection::ProcessInput() {
  if (!authenticated_ && !Authenticate()) return false;
  bool keep_open = true;
  MemcacheCommand command;
  while (!input().empty() && !context_.close_after_reply) {
    size_t consumed = 0;
    MemcacheParser::Result result = parser_.Parse(input(), &consumed, &command);
    if (result == MemcacheParser::Result::kNeedMore) break;
    if (result == MemcacheParser::Result::kCommand) {
      Enqueue(command);
      // A base64-decoded key lives in the parser: run the batch before the next Parse.
      if (command.meta.Has('b')) DispatchBatch();
    } else if (result == MemcacheParser::Result::kError) {
      DispatchBatch();  // earlier replies first
      const MemcacheParser::Error& error = parser_.error();
      if (!error.noreply && !error.reply.empty()) {
        context_.out().append(error.reply).append("\r\n");
      }
      if (!error.unlink_key.empty()) {  // the item a failed set would have replaced
        std::string_view key = error.unlink_key;
        MemcacheCommand unlink{.type = MemcacheCommand::Type::kDelete, .keys = {&key, 1},
                               .noreply = true};
        Enqueue(unlink);
        DispatchBatch();  // the key may live in the parser
      }
      if (error.close_connection) {
        keep_open = false;
        break;
      }
    }
    Consume(consumed);  // the buffer stays put until ProcessInput returns
  }
  DispatchBatch();
  return keep_open && !context_.close_after_reply;
}

void MemcacheConnection::Enqueue(const MemcacheCommand& command) {
  // The spans are pointed at the copies in DispatchBatch: the vectors may grow until then.
  batch_.push_back(command);
  batch_offsets_.emplace_back(batch_keys_.size(), batch_flags_.size());
  batch_keys_.insert(batch_keys_.end(), command.keys.begin(), command.keys.end());
  batch_flags_.insert(batch_flags_.end(), command.meta.flags.begin(), command.meta.flags.end());
}

void MemcacheConnection::DispatchBatch() {
  if (batch_.empty()) return;
  for (size_t i = 0; i < batch_.size(); ++i) {
    MemcacheCommand& command = batch_[i];
    auto [key_offset, flag_offset] = batch_offsets_[i];
    command.keys = {batch_keys_.data() + key_offset, command.keys.size()};
    command.meta.flags = {batch_flags_.data() + flag_offset, command.meta.flags.size()};
  }
  service_->DispatchMemcache(batch_, &context_);
  batch_.clear();
  batch_offsets_.clear();
  batch_keys_.clear();
  batch_flags_.clear();
}

}  // namespace damselfly::facade
