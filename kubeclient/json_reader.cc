#include "kubeclient/json_reader.h"

namespace routestatus::kubeclient {

namespace {

// Byte classes inside a JSON string.
enum : uint8_t { kPlain = 0, kQuote, kBackslash, kControl, kHigh };

struct StringTable {
  uint8_t cls[256];
  constexpr StringTable() : cls() {
    for (int c = 0; c < 256; ++c) {
      cls[c] = c < 0x20 ? kControl : c == '"' ? kQuote : c == '\\' ? kBackslash
             : c >= 0x80 ? kHigh : kPlain;
    }
  }
};
constexpr StringTable kStringTable;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Length of the well-formed UTF-8 sequence at p (RFC 3629), 0 if malformed.
size_t Utf8Length(const char* p, const char* end) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(p[i]); };
  auto cont = [&](size_t i, unsigned lo, unsigned hi) {
    return p + i < end && b(i) >= lo && b(i) <= hi;
  };
  unsigned c = b(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1, 0x80, 0xBF) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0, 0xBF) && cont(2, 0x80, 0xBF) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
    return cont(1, 0x80, 0xBF) && cont(2, 0x80, 0xBF) ? 3 : 0;
  }
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2, 0x80, 0xBF) ? 3 : 0;
  if (c == 0xF0) return cont(1, 0x90, 0xBF) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) {
    return cont(1, 0x80, 0xBF) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
  }
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
  return 0;
}

void AppendUtf8(std::string* out, unsigned cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace

void JsonReader::SkipBom() {
  if (end_ - p_ >= 3 && std::string_view(p_, 3) == "\xEF\xBB\xBF") p_ += 3;
}

bool JsonReader::BeginObject() {
  if (Peek() != '{') return false;
  ++p_;
  first_ = true;
  return true;
}

bool JsonReader::BeginArray() {
  if (Peek() != '[') return false;
  ++p_;
  first_ = true;
  return true;
}

int JsonReader::NextMember(std::string_view* key) {
  bool first = first_;
  first_ = false;
  char c = Peek();
  if (c == '}') {
    ++p_;
    return 0;
  }
  if (!first) {
    if (c != ',') return -1;
    ++p_;
  }
  if (Peek() != '"' || !Key(key)) return -1;
  if (Peek() != ':') return -1;
  ++p_;
  return 1;
}

int JsonReader::NextElement() {
  bool first = first_;
  first_ = false;
  char c = Peek();
  if (c == ']') {
    ++p_;
    return 0;
  }
  if (!first) {
    if (c != ',') return -1;
    ++p_;
  }
  return 1;
}

bool JsonReader::Key(std::string_view* key) {
  const char* start = p_ + 1;
  const char* q = start;
  while (q < end_ && kStringTable.cls[static_cast<unsigned char>(*q)] == kPlain) ++q;
  if (q < end_ && *q == '"') {
    *key = std::string_view(start, q - start);
    p_ = q + 1;
    return true;
  }
  if (!String(&scratch_)) return false;
  *key = scratch_;
  return true;
}

bool JsonReader::Hex4(unsigned* out) {
  if (end_ - p_ < 4) return false;
  unsigned v = 0;
  for (int i = 0; i < 4; ++i) {
    char c = *p_++;
    v <<= 4;
    if (c >= '0' && c <= '9') v |= c - '0';
    else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
    else return false;
  }
  *out = v;
  return true;
}

// p_ is just after a backslash.
bool JsonReader::Escape(std::string* out) {
  if (p_ >= end_) return false;
  char e = *p_++;
  char c;
  switch (e) {
    case '"': c = '"'; break;
    case '\\': c = '\\'; break;
    case '/': c = '/'; break;
    case 'b': c = '\b'; break;
    case 'f': c = '\f'; break;
    case 'n': c = '\n'; break;
    case 'r': c = '\r'; break;
    case 't': c = '\t'; break;
    case 'u': {
      unsigned cp;
      if (!Hex4(&cp)) return false;
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        unsigned lo;
        if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
        p_ += 2;
        if (!Hex4(&lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return false;
      }
      if (out) AppendUtf8(out, cp);
      return true;
    }
    default:
      return false;
  }
  if (out) out->push_back(c);
  return true;
}

bool JsonReader::String(std::string* out) {
  if (Peek() != '"') return false;
  ++p_;
  if (out) out->clear();
  const char* run = p_;
  for (;;) {
    // Why a local cursor: a char read may alias p_ itself, so a loop on
    // p_ stored it back on every byte (the restart's hottest loop).
    const char* q = p_;
    while (q < end_ && kStringTable.cls[static_cast<unsigned char>(*q)] == kPlain) ++q;
    p_ = q;
    if (p_ >= end_) return false;
    switch (kStringTable.cls[static_cast<unsigned char>(*p_)]) {
      case kQuote:
        if (out) {
          // Why: a fresh string gets exactly its size (append would round
          // 16..29 bytes up to 30); routes live long in the cache.
          if (out->empty()) *out = std::string(run, p_ - run);
          else out->append(run, p_ - run);
        }
        ++p_;
        return true;
      case kHigh: {
        size_t n = Utf8Length(p_, end_);
        if (n == 0) return false;
        p_ += n;
        break;
      }
      case kBackslash:
        if (out) out->append(run, p_ - run);
        ++p_;
        if (!Escape(out)) return false;
        run = p_;
        break;
      default:  // a control character
        return false;
    }
  }
}

bool JsonReader::Number(bool* is_integer, int64_t* value) {
  Peek();
  bool neg = false;
  if (p_ < end_ && *p_ == '-') {
    neg = true;
    ++p_;
  }
  if (p_ >= end_ || !IsDigit(*p_)) return false;
  uint64_t acc = 0;
  bool overflow = false;
  if (*p_ == '0') {
    ++p_;
  } else {
    for (; p_ < end_ && IsDigit(*p_); ++p_) {
      unsigned d = *p_ - '0';
      if (acc > (UINT64_MAX - d) / 10) overflow = true;
      else acc = acc * 10 + d;
    }
  }
  bool integer = !overflow;
  if (p_ < end_ && *p_ == '.') {
    ++p_;
    if (p_ >= end_ || !IsDigit(*p_)) return false;
    while (p_ < end_ && IsDigit(*p_)) ++p_;
    integer = false;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ >= end_ || !IsDigit(*p_)) return false;
    while (p_ < end_ && IsDigit(*p_)) ++p_;
    integer = false;
  }
  // Why: nlohmann keeps a negative integer only when it fits int64.
  if (neg && acc > static_cast<uint64_t>(INT64_MAX) + 1) integer = false;
  if (is_integer) *is_integer = integer;
  if (value && integer) *value = neg ? static_cast<int64_t>(0 - acc) : static_cast<int64_t>(acc);
  return true;
}

bool JsonReader::Literal(std::string_view word) {
  if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) {
    return false;
  }
  p_ += word.size();
  return true;
}

bool JsonReader::SkipValue() {
  const size_t base = stack_.size();
  for (;;) {
    // A value is expected here.
    bool closed = false;  // the value just read was a whole value
    switch (Peek()) {
      case '{':
        ++p_;
        if (Peek() == '}') {
          ++p_;
          closed = true;
        } else {
          std::string_view key;
          if (Peek() != '"' || !Key(&key) || Peek() != ':') return false;
          ++p_;
          stack_.push_back('{');
        }
        break;
      case '[':
        ++p_;
        if (Peek() == ']') {
          ++p_;
          closed = true;
        } else {
          stack_.push_back('[');
        }
        break;
      case '"':
        if (!String(nullptr)) return false;
        closed = true;
        break;
      case 't':
        if (!Literal("true")) return false;
        closed = true;
        break;
      case 'f':
        if (!Literal("false")) return false;
        closed = true;
        break;
      case 'n':
        if (!Literal("null")) return false;
        closed = true;
        break;
      default:
        if (!Number(nullptr, nullptr)) return false;
        closed = true;
        break;
    }
    if (!closed) continue;
    // After a whole value: close containers or move to the next value.
    for (;;) {
      if (stack_.size() == base) return true;
      char c = Peek();
      char top = stack_.back();
      if ((top == '{' && c == '}') || (top == '[' && c == ']')) {
        ++p_;
        stack_.pop_back();
        continue;
      }
      if (c != ',') return false;
      ++p_;
      if (top == '{') {
        std::string_view key;
        if (Peek() != '"' || !Key(&key) || Peek() != ':') return false;
        ++p_;
      }
      break;
    }
  }
}


}  // namespace routestatus::kubeclient
