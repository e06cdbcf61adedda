// Which arguments of a call carry a credential, so that MONITOR and SLOWLOG show
// "(redacted)" in their place, as Redis 7.0 does: all of AUTH's, HELLO's two after AUTH,
// every argument of ACL SETUSER after the subcommand (the user and its rules, which hold
// passwords), and the value of CONFIG SET requirepass.
//
// Thread-safety: a pure function.
#pragma once

#include <cstddef>

#include "helio/base/strings.h"
#include "src/facade/command_registry.h"

namespace damselfly {

inline bool IsCredentialArg(const facade::CommandId* cid, facade::CmdArgList args, size_t i) {
  if (cid == nullptr || i == 0) return false;
  if (cid->name == "AUTH") return true;
  if (cid->name == "HELLO") {
    for (size_t j = 2; j < i; ++j) {
      if (helio::EqualsIgnoreCase(args[j], "AUTH") && i <= j + 2) return true;
    }
    return false;
  }
  if (cid->name == "ACL") return i >= 2 && helio::EqualsIgnoreCase(args[1], "SETUSER");
  if (cid->name == "CONFIG") {
    return i >= 3 && helio::EqualsIgnoreCase(args[1], "SET") && i % 2 == 1 &&
           helio::EqualsIgnoreCase(args[i - 1], "requirepass");
  }
  return false;
}

}  // namespace damselfly
