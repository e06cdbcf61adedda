#include "src/server/expire_options.h"

#include <string>


#include "helio/base/strings.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"

namespace damselfly {

int64_t ExpireSpec::DeadlineMs(int64_t now_ms) const {
  if (kind == kAbsoluteMs) return value_ms;
  if (value_ms > INT64_MAX - now_ms) return -1;
  return now_ms + value_ms;
}

bool ParseExpireValue(std::string_view text, bool seconds, std::string_view command,
                      int64_t* value_ms, std::string* error) {
  std::optional<int64_t> value = ParseInt64(text);
  if (!value) {
    *error = facade::kInvalidIntErr;
    return false;
  }
  if (*value <= 0 || (seconds && *value > INT64_MAX / 1000)) {
    *error = helio::StrCat("ERR invalid expire time in '", helio::AsciiStrToLower(command),
                          "' command");
    return false;
  }
  *value_ms = seconds ? *value * 1000 : *value;
  return true;
}

}  // namespace damselfly
