// ClientConnection: the read loop every request/response protocol shares (RESP on the
// main port, the memcached text protocol on its own port): read what arrived, let the
// protocol parse and execute every complete request in it, send all replies of the
// batch with one send, repeat.
//
// Memory bounds: the read buffer grows only as far as the request being parsed needs
// (BytesNeeded(), at most doubling what has arrived per step) and shrinks back when
// idle. A whole request stays in the buffer until it is complete (its arguments are
// views into it), so the query-buffer limit (client-query-buffer-limit) bounds the
// largest request: a client whose unprocessed input passes it is closed, with a log
// line, as Redis does. Protocols flush their replies whenever they pass
// kFlushThresholdBytes, so a client that stops reading blocks its own fiber instead of
// growing the server's memory. A connection that receives pushes (StartPushes) sends
// through its PushQueue instead, bounded by its output buffer limit.
//
// Idle connections: one that has waited for a request for --conn_park_idle_ms with
// nothing buffered and no push queue (pub/sub, MONITOR) parks (see
// helio::net::Connection): it returns its read buffer's pages to the kernel, frees the
// protocol's buffers (ReleaseIdleMemory) and gives back its fiber and stack until bytes
// arrive. Parking costs nothing on the request path: the idle sweep notices idle
// connections, and a parked one pays a new fiber (and page faults on its buffer) when it
// wakes up. An idle connection then holds about 1 KiB instead of 13 KiB
// (docs/benchmarks.md, "Idle connections").
//
// maxclients: a connection takes its place in ClientAdmission before it reads anything;
// one over the limit is sent its protocol's refusal and closed (client_admission.h).
//
// Runs in its own fiber on one proactor thread (see helio::net::Connection).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/fiber/fiber.hpp>

#include "helio/net/connection.h"
#include "src/facade/client_admission.h"
#include "src/facade/push_queue.h"

namespace damselfly::facade {

class ClientConnection : public helio::net::Connection {
 public:
  // Replies are flushed once this many bytes are pending, even mid-batch.
  static constexpr size_t kFlushThresholdBytes = 64 << 10;

  ~ClientConnection() override;

  Next HandleRequests() final;
  void OnIdleSweep() final;
  // How often AcceptServer's idle sweep runs: often enough for --conn_park_idle_ms and
  // for Redis's `timeout` (at least once a second).
  static std::chrono::milliseconds IdleSweepInterval();
  // Redis's `timeout`: the sweep closes a connection that waited for its next request
  // this many seconds (0: never), unless it may not time out (MayTimeOut). Any thread.
  static void SetIdleTimeoutSeconds(int64_t seconds);
  static int64_t IdleTimeoutSeconds();
  // tcp-keepalive (Redis's, default 300): seconds of silence before a RESP client's
  // socket is probed (then every third of it, three times); 0: no probes. Taken by
  // connections that open after a change. Any thread.
  static void SetTcpKeepaliveSeconds(int64_t seconds);
  static int64_t TcpKeepaliveSeconds();
  // client-query-buffer-limit: --max_client_query_buffer until set. Any thread.
  static void SetQueryBufferLimit(uint64_t bytes);
  static uint64_t QueryBufferLimit();

  // Before the connection runs: it is outside maxclients (--admin_port).
  void set_maxclients_exempt(bool exempt) { maxclients_exempt_ = exempt; }

  // Connection fiber only: sends pending replies. False when the socket failed. A
  // connection without a socket (never accepted: the in-process tests) keeps them.
  bool Flush();

  // Connection fiber only. Makes the connection receive pushes (pub/sub, MONITOR): creates
  // its PushQueue (see push_queue.h) and the writer fiber that sends it; from then on
  // Flush hands the replies to the queue, so they leave in order with the pushes, and the
  // fiber goes on reading while the writer sends. Without a socket (in-process tests) no
  // writer runs and the queue keeps what is pushed. Returns the queue; a second call
  // returns the same one (with `default_hard_bytes`, when not 0, as its cap).
  PushQueue* StartPushes(ClientClass cls, uint64_t default_hard_bytes);
  // Any context on the connection's thread (a task another connection sent: CLIENT
  // TRACKING REDIRECT names this one): StartPushes without waiting for the connection's
  // fiber, which may be in the middle of a batch. Replies built so far reach the queue at
  // the fiber's next Flush; a send the fiber has begun ends before the writer sends
  // anything, so one fiber writes to the socket at a time.
  PushQueue* StartPushesFromTask(ClientClass cls);
  // Connection fiber only: hands the replies so far to the queue, waits until the writer
  // sent everything queued, and drops the queue; replies are sent directly again. No-op
  // without a queue. REQUIRES: no other thread can still push (its publishers let go).
  void StopPushes();
  // The queue while pushes are on, else nullptr.
  PushQueue* push_queue() const { return push_queue_.get(); }

  // Connection fiber only, around a command that blocks it (BLPOP...): while the watch
  // is on, a small fiber waits for the peer to hang up and then calls `on_hangup` on
  // this thread. Requests the client sends meanwhile stay in the socket until the
  // command is done, as Redis runs them after it. No-op without a socket (in-process
  // tests). Stop cancels the wait without waiting for the watching fiber to end (the
  // next Start, parking or closing joins it); `on_hangup` is not called after Stop.
  void StartHangupWatch(std::function<void()> on_hangup);
  void StopHangupWatch();

  // Any context on the connection's thread: ends the connection (CLIENT KILL, shutdown).
  void Kill();
  bool killed() const { return killed_; }

  // A connection without a socket whose commands another fiber runs (a replica's master
  // client): CLIENT LIST shows the addresses of `link_fd`, the socket its commands come
  // from, and the times MarkActive sets.
  void OpenWithoutSocket(int link_fd);
  void MarkActive();

  // For CLIENT LIST / INFO clients / stats.
  const std::string& peer_address() const { return peer_address_; }
  const std::string& local_address() const { return local_address_; }
  int64_t created_at_ms() const { return created_at_ms_; }
  int64_t last_active_ms() const { return last_active_ms_; }
  // The read buffer's bytes from the batch of requests being executed on; between
  // batches, those of a request not complete yet (Redis's qbuf).
  size_t query_buffer_size() const { return end_ - (in_batch_ ? batch_start_ : start_); }
  // 0 while parked: the buffer holds no memory then.
  size_t query_buffer_capacity() const { return parked_ ? 0 : capacity_; }
  // The replies being sent (0 unless the fiber is blocked sending), and the size of the
  // reply buffer at that send. Recorded by Flush, so another context on the thread may
  // read them while a shard thread writes replies during a hop.
  size_t unsent_output_bytes() const { return unsent_output_bytes_; }
  size_t output_capacity() const { return output_capacity_; }

 protected:
  ClientConnection() = default;

  // Which protocol's refusal the client gets when maxclients is reached.
  virtual ClientProtocol protocol() const = 0;
  // Parses and executes the complete requests at the front of input(), dropping each
  // with Consume(); false when the connection must close once the replies are sent.
  virtual bool ProcessInput() = 0;
  // Total bytes the request being parsed needs, once the parser knows; 0 otherwise.
  virtual size_t BytesNeeded() const = 0;
  // What the parser holds for the request being parsed beside its bytes (where each
  // argument sits): counted against the query-buffer limit, so that a request of many
  // tiny arguments cannot make the server hold several times its own size.
  virtual size_t ParserBytes() const { return 0; }
  // The replies not sent yet, and dropping them once sent.
  virtual std::string_view PendingOutput() = 0;
  virtual size_t OutputCapacity() = 0;
  virtual void ClearOutput() = 0;
  // Called once before the first read, and once after the last request.
  virtual void OnOpen() {}
  virtual void OnClose() {}
  // Frees what the protocol keeps between requests (reply and batch buffers): the
  // connection parks. REQUIRES: no replies pending.
  virtual void ReleaseIdleMemory() {}
  // Whether `timeout` may close the connection while it waits for a request (Redis spares
  // subscribers and monitors; a blocked client is inside a command, never waiting).
  virtual bool MayTimeOut() const { return false; }

  std::string_view input() const { return {&buffer_[start_], end_ - start_}; }
  void Consume(size_t bytes) { start_ += bytes; }
  // Whether `view` points into the read buffer (parsers may hand out views of their own
  // storage instead, which the next Parse call reuses).
  bool InBuffer(std::string_view view) const {
    return view.data() >= &buffer_[0] && view.data() < &buffer_[0] + capacity_;
  }

 private:
  // Read buffers: page-aligned, 16 KiB until a request needs more (see the .cc).
  static constexpr size_t kInitialBufferBytes = 16 << 10;
  struct BufferDelete {
    size_t bytes;  // no initializer: unique_ptr must see it default-constructible here
    void operator()(char* buffer) const;
  };
  using Buffer = std::unique_ptr<char[], BufferDelete>;
  static Buffer NewBuffer(size_t bytes);

  void EnsureSpace(size_t min_free);
  void CompactBuffer();
  // Arms the socket's next receive into the buffer's free end (FiberSocket::StartRecv),
  // with room for the request being parsed; no-op when one is armed.
  void StartReceive();
  // Whether a failed Recv was interrupted by the idle sweep (InterruptRecv), rather than
  // by the peer, an error, a kill or a shutdown.
  bool Interrupted(std::error_code error) const;
  // Whether the connection may give back its fiber: not while it receives pushes (its
  // writer fiber sends for it, and holds a stack anyway).
  bool MayPark() const { return !push_queue_; }
  // Stops the hang-up watch and waits for its fiber to end.
  void JoinHangupWatch();
  // Releases the buffers' memory before the connection parks. REQUIRES: nothing
  // buffered.
  void Park();
  // Creates the queue and, with a socket, the writer fiber (StartPushes' second half).
  PushQueue* CreatePushQueue(ClientClass cls, uint64_t default_hard_bytes);
  // Takes the connection's place in ClientAdmission (none when exempt); false, after
  // sending the refusal, when there is no place left.
  bool Admit();
  // Sends the one line a refused connection gets before it is closed.
  void SendRefusal(std::string_view reply);

  Buffer buffer_;
  size_t capacity_ = 0, start_ = 0, end_ = 0;
  size_t batch_start_ = 0;  // start_ when the batch being executed began
  bool in_batch_ = false;
  size_t unsent_output_bytes_ = 0, output_capacity_ = 0;
  std::string peer_address_, local_address_;
  int64_t created_at_ms_ = 0, last_active_ms_ = 0;
  bool killed_ = false;
  bool opened_ = false;
  bool maxclients_exempt_ = false;
  bool admitted_ = false;  // holds a place in ClientAdmission
  bool receiving_ = false;  // waiting in Recv
  bool receive_started_ = false;  // StartReceive armed one that no FinishRecv took yet
  bool parked_ = false;     // no fiber now, until bytes arrive
  std::unique_ptr<PushQueue> push_queue_;  // while the connection receives pushes
  boost::fibers::fiber push_writer_;
  // A writer started by StartPushesFromTask while Flush was sending: it waits here
  // until that send returns.
  boost::fibers::context* writer_waiting_for_send_ = nullptr;
  boost::fibers::fiber hangup_watch_;
  bool hangup_watch_stopping_ = false;
};

}  // namespace damselfly::facade
