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

}  // namespace damselfly
