#pragma once

// A strict reader of the protobuf wire format, enough to decode the
// Kubernetes protobuf request bodies the server accepts (see
// protobuf_object.h). Written for untrusted input: every read is bounds
// checked and malformed input ends in an error message, never a crash.

#include <cstdint>
#include <string>
#include <string_view>

namespace routestatus::apiserver {

// Protobuf wire types (the low 3 bits of a field's tag).
enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// One field as read off the wire. `bytes` points into the reader's input.
struct WireField {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t value = 0;      // kVarint, kFixed64, kFixed32
  std::string_view bytes;  // kLengthDelimited
};

// Reads the fields of one message in order from bytes it does not own (they
// must outlive the reader). Rejects truncated input, varints longer than 10
// bytes or overflowing 64 bits, field number 0 or above 2^29-1, wire types 6
// and 7, unbalanced groups and nesting deeper than kMaxDepth. Groups (wire
// type 3) are skipped whole, never returned. Once an error is recorded (by
// the reader or by the caller through Fail) Next returns false for good.
// Thread-compatible; cheap to copy.
class WireReader {
 public:
  // Deepest nesting of messages and groups accepted.
  static constexpr int kMaxDepth = 32;

  explicit WireReader(std::string_view data, int depth = 0);

  // Reads the next field. False at a clean end of the data (ok() stays
  // true) or on malformed input (ok() false, error() says why).
  bool Next(WireField* field);
  // A reader over a nested message one level deeper; it is failed from the
  // start if that is deeper than kMaxDepth.
  WireReader Nested(std::string_view bytes) const;

  // Records a decoding error the caller found (e.g. a wrong wire type for a
  // known field). The first error recorded is kept.
  void Fail(const std::string& message);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  int depth() const { return depth_; }

 private:
  bool ReadVarint(uint64_t* out);
  // Reads a tag; false (with the error set) at malformed input or clean end.
  bool ReadTag(uint32_t* number, WireType* type);
  // Skips the fields of a group up to its matching end tag.
  bool SkipGroup(uint32_t number);

  std::string_view data_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string error_;
};

// True if `s` is well-formed UTF-8 (no overlong forms, surrogates or code
// points above U+10FFFF).
bool IsValidUtf8(std::string_view s);

}  // namespace routestatus::apiserver
