#include "src/core/replace_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace damselfly::core {

int ReplaceFileContents(const std::string& path, std::string_view data, mode_t mode) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string temp = slash == std::string::npos
                               ? "temp-" + path
                               : path.substr(0, slash + 1) + "temp-" + path.substr(slash + 1);
  const int fd = open(temp.c_str(), O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, mode);
  if (fd < 0) return errno;
  int error = 0;
  for (size_t done = 0; done < data.size() && error == 0;) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno != EINTR) error = errno;
    if (n > 0) done += size_t(n);
  }
  if (error == 0 && fchmod(fd, mode) != 0) error = errno;  // whatever the umask took
  if (error == 0 && fsync(fd) != 0) error = errno;
  close(fd);
  if (error == 0 && rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    unlink(temp.c_str());
    return error;
  }
  if (int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
  return 0;
}

}  // namespace damselfly::core
