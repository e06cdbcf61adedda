#include "src/server/replication_family.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/blocking_controller.h"
#include "src/server/replica.h"
#include "src/server/replication.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

// SYNC
void CmdSync(CmdArgList, ConnectionContext* cntx) {
  if (IsReplica(cntx)) return;  // a replica's second SYNC is ignored, as in Redis
  ServeReplica(cntx, /*psync=*/false, "", 0);
}

// PSYNC replid offset
void CmdPsync(CmdArgList args, ConnectionContext* cntx) {
  if (IsReplica(cntx)) return;
  std::optional<int64_t> offset = ParseInt64(args[2]);
  if (!offset) return cntx->reply_builder()->SendError(facade::kInvalidIntErr);
  ServeReplica(cntx, /*psync=*/true, args[1], *offset);
}

// REPLCONF option value [option value ...]
void CmdReplconf(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() % 2 == 0) return rb->SendError(facade::kSyntaxErr);
  for (size_t i = 1; i < args.size(); i += 2) {
    std::string_view option = args[i], value = args[i + 1];
    if (ArgIs(option, "listening-port")) {
      std::optional<int64_t> port = ParseInt64(value);
      if (!port) return rb->SendError(facade::kInvalidIntErr);
      SetReplicaAddress(cntx, "", *port);
    } else if (ArgIs(option, "ip-address")) {
      constexpr size_t kMaxHostLen = 46;  // Redis's NET_HOST_STR_LEN
      if (value.size() >= kMaxHostLen) {
        return rb->SendError(helio::StrCat(
            "ERR REPLCONF ip-address provided by replica instance is too long: ", value.size(),
            " bytes"));
      }
      SetReplicaAddress(cntx, value, -1);
    } else if (ArgIs(option, "capa")) {
      // eof needs nothing: the snapshot goes as a sized bulk, which every replica reads.
      SetReplicaCapa(cntx, value);
    } else if (ArgIs(option, "ack")) {
      // From a replica, every second and after GETACK: never answered.
      if (std::optional<int64_t> offset = ParseInt64(value)) ReplicaAck(cntx, *offset);
      return;
    } else if (ArgIs(option, "getack")) {
      return;  // a master has no master to acknowledge
    } else if (ArgIs(option, "rdb-only")) {
      std::optional<int64_t> flag = ParseInt64(value);
      if (!flag || (*flag != 0 && *flag != 1)) return rb->SendError(facade::kInvalidIntErr);
    } else {
      return rb->SendError(helio::StrCat("ERR Unrecognized REPLCONF option: ", option));
    }
  }
  rb->SendOk();
}

// ROLE
void CmdRole(CmdArgList, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (MasterLinkStatus link = GetMasterLinkStatus(); link.following) {
    rb->StartArray(5);
    rb->SendBulk("slave");
    rb->SendBulk(link.host);
    rb->SendLong(link.port);
    rb->SendBulk(link.state);
    return rb->SendLong(link.state == "connected" ? link.offset : -1);
  }
  ReplicationStatus status = GetReplicationStatus();
  rb->StartArray(3);
  rb->SendBulk("master");
  rb->SendLong(status.offset);
  rb->StartArray(status.replicas.size());
  for (const ReplicaStatus& replica : status.replicas) {
    rb->StartArray(3);
    rb->SendBulk(replica.ip);
    rb->SendBulk(helio::StrCat(replica.port));
    rb->SendBulk(helio::StrCat(replica.ack_offset));
  }
}

// WAIT numreplicas timeout (milliseconds; 0 waits forever).
void CmdWait(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> wanted = ParseInt64(args[1]);
  if (!wanted) return rb->SendError(facade::kInvalidIntErr);
  std::optional<int64_t> timeout_ms = ParseInt64(args[2]);
  if (!timeout_ms) return rb->SendError("ERR timeout is not an integer or out of range");
  if (*timeout_ms < 0) return rb->SendError("ERR timeout is negative");
  // Every write made so far, this client's among them (a conservative reading of Redis's
  // offset of the client's last write).
  const int64_t offset = StreamOffset();
  const int64_t acked = CountAcked(offset);
  if (acked >= *wanted || !blocking::MayBlock(cntx)) return rb->SendLong(acked);
  using Clock = std::chrono::steady_clock;
  // A timeout past a century is as good as forever, and keeps the deadline in range.
  constexpr int64_t kCenturyMs = int64_t{100} * 365 * 24 * 3600 * 1000;
  Clock::time_point deadline =
      *timeout_ms == 0 || *timeout_ms > kCenturyMs
          ? Clock::time_point::max()
          : Clock::now() + std::chrono::milliseconds(*timeout_ms);
  // A waiter on no key: the replicas' ACKs settle it, or the timeout, CLIENT UNBLOCK or
  // a hang-up ends it.
  WaiterPtr waiter(new Waiter(cntx->db_index, [](Waiter*, DbIndex, std::string_view) {
    return false;
  }));
  AwaitAcks(waiter, offset, *wanted);
  switch (blocking::Wait(cntx, waiter, {}, deadline)) {
    case Waiter::State::kUnblocked:
      return rb->SendError(blocking::kUnblockedErr);
    case Waiter::State::kDisconnected:
      return;
    default:
      return rb->SendLong(CountAcked(offset));
  }
}

}  // namespace

void ReplicationFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  constexpr uint32_t kAclAdminCmd = kAclAdmin | kAclSlow | kAclDangerous;
  r.Add("SYNC", 1, kCmdAdmin | kCmdNoScript | kCmdNoMulti, kNoKeys, kAclAdminCmd, CmdSync);
  r.Add("PSYNC", -3, kCmdAdmin | kCmdNoScript | kCmdNoMulti, kNoKeys, kAclAdminCmd, CmdPsync);
  r.Add("REPLCONF", -1, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdAllowBusy,
        kNoKeys, kAclAdminCmd, CmdReplconf);
  r.Add("ROLE", 1, kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast, kNoKeys,
        kAclAdmin | kAclFast | kAclDangerous, CmdRole);
  r.Add("WAIT", 3, kCmdNoScript, kNoKeys, kAclSlow | kAclConnection, CmdWait);
}

}  // namespace damselfly
