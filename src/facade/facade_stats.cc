#include "src/facade/facade_stats.h"

namespace damselfly::facade {

FacadeStats* FacadeStats::tlocal() {
  static thread_local FacadeStats stats;
  return &stats;
}

void FacadeStats::CountError(std::string_view message) {
  ++error_replies;
  std::string_view code = message.substr(0, message.find(' '));
  auto it = errors_by_code.find(code);
  if (it != errors_by_code.end()) {
    ++it->second;
  } else if (errors_by_code.size() < kMaxErrorCodes) {
    errors_by_code.emplace(std::string(code), 1);
  }
}

void FacadeStats::ResetErrors() {
  error_replies = 0;
  errors_by_code.clear();
}

}  // namespace damselfly::facade
