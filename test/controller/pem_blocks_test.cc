// DecodePemBlocks reads PEM as Go's encoding/pem does (openshift-router's
// decoder): which blocks it finds, and which it skips.
#include "controller/pem_blocks.h"

#include <gtest/gtest.h>

namespace routestatus::controller {
namespace {

// "TYPE:bytes" per block, "+h" when it had headers.
std::vector<std::string> Read(std::string_view text) {
  std::vector<std::string> out;
  for (const PemBlock& b : DecodePemBlocks(text)) {
    out.push_back(b.type + ":" + b.der + (b.has_headers ? "+h" : ""));
  }
  return out;
}

using Blocks = std::vector<std::string>;

TEST(PemBlocksTest, AsGoReadsThem) {
  struct Case {
    const char* name;
    std::string text;
    Blocks want;
  } cases[] = {
      {"one block", "-----BEGIN A-----\naGVsbG8=\n-----END A-----\n", {"A:hello"}},
      {"text around blocks", "junk\n-----BEGIN A-----\nYWJj\n-----END A-----\nmore\n"
                             "-----BEGIN B C-----\naGk=\n-----END B C-----",
       {"A:abc", "B C:hi"}},
      {"CRLF lines, trailing blanks", "-----BEGIN A-----\r\nYW\r\nJj\r\n-----END A-----  \r\n",
       {"A:abc"}},
      {"spaces and tabs in the body", "-----BEGIN A-----\nYW Jj\t\n-----END A-----\n", {"A:abc"}},
      {"empty body", "-----BEGIN A-----\n-----END A-----\n", {"A:"}},
      {"headers", "-----BEGIN A-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: x\n\nYWJj\n-----END A-----\n",
       {"A:abc+h"}},
      {"padding", "-----BEGIN A-----\nYQ==\n-----END A-----\n-----BEGIN B-----\nYWI=\n-----END B-----\n",
       {"A:a", "B:ab"}},
      // A block that does not decode is skipped; reading goes on at the
      // next BEGIN line after its own.
      {"body not base64", "-----BEGIN A-----\n!!!!\n-----END A-----\n-----BEGIN B-----\naGk=\n-----END B-----\n",
       {"B:hi"}},
      {"no END line", "-----BEGIN A-----\nYWJj\n-----BEGIN B-----\naGk=\n-----END B-----\n", {"B:hi"}},
      {"END of another type", "-----BEGIN A-----\nYWJj\n-----END B-----\n", {}},
      {"text after the END dashes", "-----BEGIN A-----\nYWJj\n-----END A----- x\n", {}},
      {"BEGIN line without closing dashes",
       "-----BEGIN A--\nYWJj\n-----END A-----\n-----BEGIN B-----\naGk=\n-----END B-----\n", {"B:hi"}},
      {"headers then another block", "-----BEGIN A-----\nk: v\n-----BEGIN B-----\naGk=\n-----END B-----\n",
       {"B:hi"}},
      {"single '=' after two digits", "-----BEGIN A-----\nYQ=\n-----END A-----\n", {}},
      {"missing padding", "-----BEGIN A-----\nYQ\n-----END A-----\n", {}},
      {"digits after padding", "-----BEGIN A-----\nYQ==YQ==\n-----END A-----\n", {}},
      {"padding too early", "-----BEGIN A-----\nY===\n-----END A-----\n", {}},
      // Not blocks at all, or the end of the reading.
      {"BEGIN inside a line", "x -----BEGIN A-----\nYWJj\n-----END A-----\n", {}},
      {"BEGIN as the last line", "-----BEGIN A-----\nYWJj\n-----END A-----\n-----BEGIN B-----", {"A:abc"}},
      {"headers to the end", "-----BEGIN A-----\nk: v\n", {}},
      {"no PEM", "not PEM at all", {}},
  };
  for (const Case& c : cases) EXPECT_EQ(Read(c.text), c.want) << c.name;
}

}  // namespace
}  // namespace routestatus::controller
