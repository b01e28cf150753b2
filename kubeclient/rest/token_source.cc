#include "kubeclient/rest/token_source.h"

#include <sys/stat.h>


#include <glog/logging.h>

#include "base/bounded_file.h"

namespace routestatus::kubeclient::rest {

TokenSource::TokenSource(std::string token, std::string token_file)
    : static_token_(std::move(token)), file_(std::move(token_file)) {}

Status CheckTokenBytes(std::string_view token, const std::string& source) {
  if (token.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos) {
    return Status::Ok();
  }
  return Status(StatusCode::kUnauthorized,
                "bearer token from " + source +
                    " contains a line break or NUL (CR, LF or NUL); refused, as it would "
                    "inject HTTP headers");
}

StatusOr<std::string> TokenSource::Token() {
  if (file_.empty()) {
    if (Status s = CheckTokenBytes(static_token_, "kubeconfig users[].user.token"); !s.ok()) {
      return s;
    }
    return static_token_;
  }
  std::lock_guard<std::mutex> l(mu_);
  struct stat st {};
  if (::stat(file_.c_str(), &st) != 0) {
    if (!cached_.empty()) return cached_;  // Why: keep working across a rotation gap.
    return Status(StatusCode::kUnauthorized, "token file " + file_ + ": cannot stat");
  }
  int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (mtime == mtime_ns_ && st.st_size == size_ && st.st_ino == inode_) return cached_;
  StatusOr<std::string> text = ReadBoundedFile(file_, kMaxTokenFileBytes);
  if (!text.ok()) {
    if (!cached_.empty()) return cached_;
    return Status(StatusCode::kUnauthorized,
                  "token file " + file_ + ": cannot read: " + text.status().message());
  }
  std::string token = std::move(text).value();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  if (token.empty() && !cached_.empty()) return cached_;  // a half-written file
  if (Status s = CheckTokenBytes(token, "token file " + file_); !s.ok()) return s;
  if (!cached_.empty() && token != cached_) VLOG(2) << "bearer token in " << file_ << " rotated";
  cached_ = std::move(token);
  mtime_ns_ = mtime;
  size_ = st.st_size;
  inode_ = st.st_ino;
  return cached_;
}

}  // namespace routestatus::kubeclient::rest
