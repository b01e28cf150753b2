#include "apiserver/go_json.h"

#include <cstdio>
#include <vector>

namespace routestatus::apiserver {

namespace {

// The states of Go's JSON scanner (encoding/json/scanner.go) this checker
// needs; each names what it expects, which becomes the error's context.
enum class State {
  kBeginValueOrEmpty,  // after '['
  kBeginValue,
  kBeginStringOrEmpty,  // after '{'
  kBeginString,         // after ',' in an object
  kEndValue,
  kEndTop,
  kInString,
  kInStringEsc,
  kInStringEscU,  // + `hex_left` digits to go
  kNeg,
  kOne,  // inside an integer starting 1-9
  kZero,
  kDot,
  kDotDigits,
  kE,
  kESign,
  kEDigits,
  kLiteral,  // inside true/false/null: `literal` and `literal_at`
};

enum class Container { kObjectKey, kObjectValue, kArray };

// Go's maxNestingDepth (encoding/json/scanner.go): objects and arrays open at
// once.
constexpr size_t kGoMaxNestingDepth = 10000;

bool IsSpace(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
bool IsHex(unsigned char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

void AppendUtf8(unsigned code, std::string* out) {
  if (code < 0x80) {
    *out += static_cast<char>(code);
  } else {
    *out += static_cast<char>(0xC0 | (code >> 6));
    *out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// Go's quoteChar: the byte as a rune (Latin-1) in single quotes, escaped
// the way strconv.Quote escapes it.
std::string QuoteChar(unsigned char c) {
  if (c == '\'') return "'\\''";
  if (c == '"') return "'\"'";
  std::string inner;
  char buf[8];
  switch (c) {
    case '\a': inner = "\\a"; break;
    case '\b': inner = "\\b"; break;
    case '\f': inner = "\\f"; break;
    case '\n': inner = "\\n"; break;
    case '\r': inner = "\\r"; break;
    case '\t': inner = "\\t"; break;
    case '\v': inner = "\\v"; break;
    case '\\': inner = "\\\\"; break;
    default:
      if (c < 0x20 || c == 0x7F) {
        std::snprintf(buf, sizeof(buf), "\\x%02x", c);
        inner = buf;
      } else if (c < 0x7F) {
        inner = std::string(1, static_cast<char>(c));
      } else if (c <= 0xA0 || c == 0xAD) {
        // Why: C1 controls, no-break space and soft hyphen are not printable
        // for strconv.IsPrint.
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        inner = buf;
      } else {
        AppendUtf8(c, &inner);
      }
  }
  return "'" + inner + "'";
}

class Checker {
 public:
  // Feeds one byte; false once an error is recorded in error_.
  bool Step(unsigned char c) {
    switch (state_) {
      case State::kBeginValueOrEmpty:
        if (IsSpace(c)) return true;
        if (c == ']') return EndValue(c);
        return BeginValue(c);
      case State::kBeginValue: return BeginValue(c);
      case State::kBeginStringOrEmpty:
        if (IsSpace(c)) return true;
        if (c == '}') {
          stack_.back() = Container::kObjectValue;
          return EndValue(c);
        }
        return BeginString(c);
      case State::kBeginString: return BeginString(c);
      case State::kEndValue: return EndValue(c);
      case State::kEndTop: return IsSpace(c) || Fail(c, "after top-level value");
      case State::kInString:
        if (c == '"') return To(State::kEndValue);
        if (c == '\\') return To(State::kInStringEsc);
        return c >= 0x20 || Fail(c, "in string literal");
      case State::kInStringEsc:
        if (c == 'u') {
          hex_left_ = 4;
          return To(State::kInStringEscU);
        }
        if (c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't' || c == '\\' || c == '/' ||
            c == '"') {
          return To(State::kInString);
        }
        return Fail(c, "in string escape code");
      case State::kInStringEscU:
        if (!IsHex(c)) return Fail(c, "in \\u hexadecimal character escape");
        if (--hex_left_ == 0) state_ = State::kInString;
        return true;
      case State::kNeg:
        if (c == '0') return To(State::kZero);
        if (IsDigit(c)) return To(State::kOne);
        return Fail(c, "in numeric literal");
      case State::kOne:
        if (IsDigit(c)) return true;
        return Zero(c);
      case State::kZero: return Zero(c);
      case State::kDot:
        if (IsDigit(c)) return To(State::kDotDigits);
        return Fail(c, "after decimal point in numeric literal");
      case State::kDotDigits:
        if (IsDigit(c)) return true;
        if (c == 'e' || c == 'E') return To(State::kE);
        return EndValue(c);
      case State::kE:
        if (c == '+' || c == '-') return To(State::kESign);
        [[fallthrough]];
      case State::kESign:
        if (IsDigit(c)) return To(State::kEDigits);
        return Fail(c, "in exponent of numeric literal");
      case State::kEDigits:
        if (IsDigit(c)) return true;
        return EndValue(c);
      case State::kLiteral: {
        char want = literal_[literal_at_];
        if (c != static_cast<unsigned char>(want)) {
          return Fail(c, std::string("in literal ") + literal_ + " (expecting '" + want + "')");
        }
        if (literal_[++literal_at_] == '\0') state_ = State::kEndValue;
        return true;
      }
    }
    return true;
  }

  // Go's scanner.eof: completes a trailing number, then the input must be
  // one whole value.
  std::optional<std::string> End() {
    if (!error_.empty()) return error_;
    if (state_ == State::kEndTop) return std::nullopt;
    Step(' ');
    if (!error_.empty()) return error_;
    if (state_ == State::kEndTop) return std::nullopt;
    return std::string("unexpected end of JSON input");
  }
  const std::string& error() const { return error_; }

 private:
  bool To(State s) {
    state_ = s;
    return true;
  }
  bool Fail(unsigned char c, const std::string& context) {
    error_ = "invalid character " + QuoteChar(c) + " " + context;
    return false;
  }
  bool BeginValue(unsigned char c) {
    if (IsSpace(c)) return true;
    switch (c) {
      case '{': return Push(c, Container::kObjectKey, State::kBeginStringOrEmpty);
      case '[': return Push(c, Container::kArray, State::kBeginValueOrEmpty);
      case '"': return To(State::kInString);
      case '-': return To(State::kNeg);
      case '0': return To(State::kZero);
      case 't': return Literal("true");
      case 'f': return Literal("false");
      case 'n': return Literal("null");
      default:
        if (c >= '1' && c <= '9') return To(State::kOne);
        return Fail(c, "looking for beginning of value");
    }
  }
  bool BeginString(unsigned char c) {
    if (IsSpace(c)) return true;
    if (c == '"') return To(State::kInString);
    return Fail(c, "looking for beginning of object key string");
  }
  bool Literal(const char* word) {
    literal_ = word;
    literal_at_ = 1;
    return To(State::kLiteral);
  }
  bool Zero(unsigned char c) {
    if (c == '.') return To(State::kDot);
    if (c == 'e' || c == 'E') return To(State::kE);
    return EndValue(c);
  }
  bool EndValue(unsigned char c) {
    if (stack_.empty()) {
      state_ = State::kEndTop;
      return Step(c);
    }
    state_ = State::kEndValue;
    if (IsSpace(c)) return true;
    switch (stack_.back()) {
      case Container::kObjectKey:
        if (c == ':') {
          stack_.back() = Container::kObjectValue;
          return To(State::kBeginValue);
        }
        return Fail(c, "after object key");
      case Container::kObjectValue:
        if (c == ',') {
          stack_.back() = Container::kObjectKey;
          return To(State::kBeginString);
        }
        if (c == '}') return Pop();
        return Fail(c, "after object key:value pair");
      case Container::kArray:
        if (c == ',') return To(State::kBeginValue);
        if (c == ']') return Pop();
        return Fail(c, "after array element");
    }
    return true;
  }
  // Go's pushParseState: more than kGoMaxNestingDepth open containers is
  // an error at the opening byte.
  bool Push(unsigned char c, Container container, State next) {
    stack_.push_back(container);
    if (stack_.size() > kGoMaxNestingDepth) return Fail(c, "exceeded max depth");
    return To(next);
  }
  bool Pop() {
    stack_.pop_back();
    state_ = stack_.empty() ? State::kEndTop : State::kEndValue;
    return true;
  }

  State state_ = State::kBeginValue;
  std::vector<Container> stack_;
  const char* literal_ = "";
  size_t literal_at_ = 0;
  int hex_left_ = 0;
  std::string error_;
};

}  // namespace

std::optional<std::string> GoJsonSyntaxError(std::string_view data) {
  Checker checker;
  for (unsigned char c : data) {
    if (!checker.Step(c)) return checker.error();
  }
  return checker.End();
}

std::string SummarizeBody(std::string_view data) {
  constexpr size_t kMax = 30;
  if (data.empty()) return "<empty>";
  std::string_view head = data.substr(0, kMax);
  std::string out;
  if (data.front() == '{') {
    out = std::string(head);
  } else {
    static const char kHex[] = "0123456789abcdef";
    for (unsigned char c : head) {
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (data.size() > kMax) out += " ...";
  return out;
}

}  // namespace routestatus::apiserver
