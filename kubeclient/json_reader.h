#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace routestatus::kubeclient {

// A validating pull reader over JSON text (RFC 8259, strict UTF-8: what
// nlohmann::json::parse accepts), for decoders that skip the DOM. Calls
// return false on invalid input; after a false the reader is unusable.
// Spans (pos()) point into the caller's text, which must outlive the reader.
// Not thread-safe (one reader per thread); no recursion, so deep nesting is safe.
class JsonReader {
 public:
  explicit JsonReader(std::string_view text)
      : p_(text.data()), end_(text.data() + text.size()) {}

  // Skips a UTF-8 byte order mark (only at the very start, as nlohmann does).
  void SkipBom();
  // The first byte of the next token after whitespace ('\0' at the end).
  // Inline: called for every token (~30 times a route on a restart).
  char Peek() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    return p_ < end_ ? *p_ : '\0';
  }
  // True when only whitespace is left.
  bool AtEnd() { return Peek() == '\0' && p_ == end_; }
  // Where the next byte is read (after Peek(): the next token).
  const char* pos() const { return p_; }

  // Objects: BeginObject() consumes '{'; NextMember() returns 1 with the
  // (unescaped) key, positioned at its value, or 0 after the closing '}',
  // or -1 on invalid input. The key view is valid until the next call.
  bool BeginObject();
  int NextMember(std::string_view* key);
  // Arrays: the same with '[' and NextElement() (1: at an element).
  bool BeginArray();
  int NextElement();

  // Reads a string value (unescaped) into *out, or only validates it when
  // out is null.
  bool String(std::string* out);
  // Reads a number; *is_integer says whether it has no fraction/exponent
  // and fits 64 bits (then *value holds it, wrapped to int64 like nlohmann's
  // get<int64_t>()).
  bool Number(bool* is_integer, int64_t* value);
  // Validates and skips any value.
  bool SkipValue();

 private:
  bool Literal(std::string_view word);
  bool Key(std::string_view* key);
  bool Escape(std::string* out);
  bool Hex4(unsigned* out);

  const char* p_;
  const char* end_;
  bool first_ = false;  // the next NextMember/NextElement is the first one
  std::string scratch_;
  std::string stack_;
};

}  // namespace routestatus::kubeclient
