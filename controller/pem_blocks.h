#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace routestatus::controller {

// One PEM block: its type ("CERTIFICATE", "RSA PRIVATE KEY") and the bytes
// its base64 body decodes to. Value type.
struct PemBlock {
  std::string type;
  std::string der;
  // "Key: value" lines followed the BEGIN line (an encrypted key's
  // Proc-Type, say). client-go's certificate reader skips such blocks.
  bool has_headers = false;
};

// The PEM blocks of `text` in order, read as Go's encoding/pem reads them
// (openshift-router's decoder), so that both find the same blocks:
// - text outside blocks is ignored; a BEGIN line counts at the start of
//   `text` or of a line, a line's trailing spaces, tabs and \r are ignored;
// - a block that does not decode (no matching END line, text after the
//   END line's dashes, a body that is not padded base64 once spaces, tabs,
//   \r and \n are dropped) is skipped and reading goes on at the next BEGIN
//   line after its own;
// - reading stops when a BEGIN line is the last line of the text.
// Pure; thread-safe. Used for routes with spec.tls only.
std::vector<PemBlock> DecodePemBlocks(std::string_view text);

}  // namespace routestatus::controller
