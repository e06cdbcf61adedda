#include "src/server/expire_options.h"

#include "helio/base/strings.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"

namespace damselfly {

bool ExpireSpec::Resolve(std::string_view command, int64_t now_ms, int64_t* deadline_ms,
                         std::string* error) const {
  std::optional<int64_t> number = ParseInt64(value);
  if (!number) {
    *error = facade::kInvalidIntErr;
    return false;
  }
  int64_t ms = *number;
  bool valid = ms > 0 && !(in_seconds && ms > INT64_MAX / 1000);
  if (valid && in_seconds) ms *= 1000;
  if (valid && kind == kRelative) {
    valid = ms <= INT64_MAX - now_ms;
    ms += valid ? now_ms : 0;
  }
  if (!valid) {
    *error = helio::StrCat("ERR invalid expire time in '", helio::AsciiStrToLower(command),
                           "' command");
    return false;
  }
  *deadline_ms = ms;
  return true;
}

std::optional<ExpireCondition> ExpireCondition::Parse(absl::Span<const std::string_view> options,
                                                      std::string* error) {
  ExpireCondition condition;
  for (std::string_view option : options) {
    if (ArgIs(option, "NX")) {
      condition.nx = true;
    } else if (ArgIs(option, "XX")) {
      condition.xx = true;
    } else if (ArgIs(option, "GT")) {
      condition.gt = true;
    } else if (ArgIs(option, "LT")) {
      condition.lt = true;
    } else {
      *error = helio::StrCat("ERR Unsupported option ", facade::AsCString(option));
      return std::nullopt;
    }
  }
  if (condition.nx && (condition.xx || condition.gt || condition.lt)) {
    *error = "ERR NX and XX, GT or LT options at the same time are not compatible";
    return std::nullopt;
  }
  if (condition.gt && condition.lt) {
    *error = "ERR GT and LT options at the same time are not compatible";
    return std::nullopt;
  }
  return condition;
}

bool ExpireCondition::Allows(int64_t current_ms, int64_t deadline_ms) const {
  if (nx && current_ms != 0) return false;
  if (xx && current_ms == 0) return false;
  if (gt && (current_ms == 0 || deadline_ms <= current_ms)) return false;
  if (lt && current_ms != 0 && deadline_ms >= current_ms) return false;
  return true;
}

}  // namespace damselfly
