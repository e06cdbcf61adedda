#include "helio/net/uring_multishot_recv.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace helio::net {

namespace {

// Released receivers whose request the kernel has not ended yet. Those still here when
// the thread exits (its ring goes with it) are freed then.
struct Released {
  std::vector<MultishotRecv*> receivers;
  ~Released();
};
thread_local Released released;

}  // namespace

MultishotRecv::MultishotRecv(io::UringProactor* proactor, int fd, int file_slot)
    : proactor_(proactor), fd_(fd), file_slot_(file_slot) {
  request_.owner = this;
  request_.on_complete = &MultishotRecv::OnComplete;
  direct_.owner = this;
  direct_.on_complete = &MultishotRecv::OnDirectComplete;
}

void MultishotRecv::Arm() {
  if (armed_ || direct_armed_ || want_direct_ || ended_ || cancelled_ || released_ ||
      inbox_size() >= kInboxBytes) {
    return;
  }
  io_uring_sqe* sqe = proactor_->GetSqe();
  io_uring_prep_recv_multishot(sqe, fd_, nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = io::UringProactor::kRecvBufferGroup;
  if (file_slot_ >= 0) {
    sqe->fd = file_slot_;
    sqe->flags |= IOSQE_FIXED_FILE;
  }
  proactor_->Submit(sqe, &request_);
  armed_ = true;
  cancel_sent_ = false;
}

void MultishotRecv::SubmitDirect() {
  DCHECK(started_ && filled_ == 0 && !armed_ && !direct_armed_);
  io_uring_sqe* sqe = proactor_->GetSqe();
  io_uring_prep_recv(sqe, fd_, buf_.data(), buf_.size(), 0);
  if (file_slot_ >= 0) {
    sqe->fd = file_slot_;
    sqe->flags |= IOSQE_FIXED_FILE;
  }
  proactor_->Submit(sqe, &direct_);
  direct_armed_ = true;
}

void MultishotRecv::OnDirectComplete(io::UringProactor::Request* request) {
  MultishotRecv* self = static_cast<Request*>(request)->owner;
  self->direct_armed_ = false;
  if (self->DeleteIfDone()) return;
  const int res = request->result;
  if (res > 0) {
    self->filled_ += size_t(res);
    self->NoteReceived(size_t(res));
  } else if (!(res == -ECANCELED && !self->cancelled_)) {  // not Interrupt's cancellation
    self->End(res);
  }
  self->Wake();
}

bool MultishotRecv::DeleteIfDone() {
  if (!released_ || armed_ || direct_armed_) return false;
  auto& list = released.receivers;
  auto it = std::find(list.begin(), list.end(), this);
  if (it != list.end()) list.erase(it);
  delete this;
  return true;
}

void MultishotRecv::End(int result) {
  ended_ = true;
  end_result_ = cancelled_ ? -ECANCELED : result;
}

void MultishotRecv::CancelRequest() {
  if (!armed_ || cancel_sent_) return;
  proactor_->Cancel(&request_);
  cancel_sent_ = true;
}

void MultishotRecv::OnComplete(io::UringProactor::Request* request) {
  MultishotRecv* self = static_cast<Request*>(request)->owner;
  const int res = request->result;
  const uint32_t flags = request->cqe_flags;
  if (res > 0) {
    DCHECK(flags & IORING_CQE_F_BUFFER);
    self->NoteReceived(size_t(res));
    const auto id = uint16_t(flags >> IORING_CQE_BUFFER_SHIFT);
    if (!self->released_) self->Deliver(self->proactor_->RecvBuffer(id), size_t(res));
    self->proactor_->ReturnRecvBuffer(id);
    // What follows is read straight into the receiver's buffer (see Start), not 4 KiB at
    // a time through the inbox.
    if (self->Streaming()) self->CancelRequest();
  }
  if (flags & IORING_CQE_F_MORE) return;

  // The kernel ended the receive.
  self->armed_ = false;
  if (self->DeleteIfDone()) return;
  if (res == 0 || (res < 0 && res != -ENOBUFS && !(res == -ECANCELED && !self->cancelled_))) {
    // The peer closed, an error, or Cancel. ENOBUFS (the provided buffers ran out for a
    // moment) and our own cancellation (a full inbox, a big read) are not ends.
    self->End(res);
    self->Wake();
    return;
  }
  if (self->started_ && self->filled_ == 0 && !self->interrupted_) {
    if (self->want_direct_ || self->Streaming()) {
      self->want_direct_ = true;
      return self->SubmitDirect();
    }
    self->Arm();
  } else if (self->on_readable_) {
    self->Arm();
  }
}

void MultishotRecv::Deliver(const uint8_t* data, size_t size) {
  if (started_ && inbox_size() == 0) {
    size_t n = std::min(size, buf_.size() - filled_);
    memcpy(buf_.data() + filled_, data, n);
    filled_ += n;
    data += n;
    size -= n;
  }
  if (size > 0) {
    inbox_.append(reinterpret_cast<const char*>(data), size);
    if (inbox_size() >= kInboxBytes) CancelRequest();
  }
  Wake();
}

void MultishotRecv::TakeFromInbox() {
  size_t n = std::min(inbox_size(), buf_.size() - filled_);
  if (n == 0) return;
  memcpy(buf_.data() + filled_, inbox_.data() + inbox_head_, n);
  filled_ += n;
  inbox_head_ += n;
  if (inbox_head_ == inbox_.size()) {
    // Drained: an idle connection keeps no inbox memory.
    std::string().swap(inbox_);
    inbox_head_ = 0;
  }
}

void MultishotRecv::Wake() {
  if (waiter_) boost::fibers::context::active()->schedule(std::exchange(waiter_, nullptr));
  if (on_readable_) std::exchange(on_readable_, nullptr)();
}

void MultishotRecv::Start(absl::Span<uint8_t> buf) {
  DCHECK(!started_);
  started_ = true;
  buf_ = buf;
  filled_ = 0;
  TakeFromInbox();
  if (filled_ == 0 && (Streaming() || buf.size() > kDirectBytes) && !ended_ && !cancelled_ &&
      !interrupted_) {
    want_direct_ = true;
    if (armed_) {
      CancelRequest();  // its last completion submits the direct receive
    } else {
      SubmitDirect();
    }
    return;
  }
  // Armed even when the bytes are here already: what comes next is then taken in its
  // order of arrival (see FiberSocket::StartRecv).
  Arm();
}

Result<size_t> MultishotRecv::Finish() {
  DCHECK(started_);
  // A direct receive must end before its buffer goes back to the caller.
  while (direct_armed_ || (filled_ == 0 && !interrupted_ && !ended_ && !cancelled_)) {
    waiter_ = boost::fibers::context::active();
    waiter_->suspend();
  }
  waiter_ = nullptr;
  started_ = false;
  want_direct_ = false;
  const bool interrupted = std::exchange(interrupted_, false);
  if (filled_ > 0) return filled_;
  if (interrupted || cancelled_) return ErrnoCode(ECANCELED);
  DCHECK(ended_);
  if (end_result_ < 0) return ErrnoCode(-end_result_);
  return size_t(0);
}

void MultishotRecv::Interrupt() {
  interrupted_ = true;
  if (direct_armed_) proactor_->Cancel(&direct_);
  if (waiter_) boost::fibers::context::active()->schedule(std::exchange(waiter_, nullptr));
}

void MultishotRecv::NotifyWhenReadable(std::function<void()> on_readable) {
  DCHECK(!started_ && !on_readable_);
  if (inbox_size() > 0 || ended_ || cancelled_) {
    on_readable();
    return;
  }
  on_readable_ = std::move(on_readable);
  Arm();
}

void MultishotRecv::Cancel() {
  cancelled_ = true;
  CancelRequest();
  if (direct_armed_) proactor_->Cancel(&direct_);
  Wake();
}

void MultishotRecv::Release(MultishotRecv* recv) {
  recv->released_ = true;
  recv->on_readable_ = nullptr;
  if (recv->DeleteIfDone()) return;
  recv->CancelRequest();
  if (recv->direct_armed_) recv->proactor_->Cancel(&recv->direct_);
  released.receivers.push_back(recv);
}

Released::~Released() {
  for (MultishotRecv* recv : receivers) delete recv;
}

}  // namespace helio::net
