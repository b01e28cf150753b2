#include "apiserver/selector_syntax.h"

#include <vector>

namespace routestatus::apiserver {

namespace {

enum class Tok {
  kError,
  kEnd,
  kClosedPar,
  kComma,
  kDoesNotExist,
  kDoubleEquals,
  kEquals,
  kGreater,
  kIdentifier,
  kIn,
  kLess,
  kNotEquals,
  kNotIn,
  kOpenPar,
};

struct Token {
  Tok tok;
  std::string literal;
};

bool IsSpecial(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::optional<Tok> SymbolToken(const std::string& s) {
  if (s == ")") return Tok::kClosedPar;
  if (s == ",") return Tok::kComma;
  if (s == "!") return Tok::kDoesNotExist;
  if (s == "==") return Tok::kDoubleEquals;
  if (s == "=") return Tok::kEquals;
  if (s == ">") return Tok::kGreater;
  if (s == "<") return Tok::kLess;
  if (s == "!=") return Tok::kNotEquals;
  if (s == "(") return Tok::kOpenPar;
  return std::nullopt;
}

// kube's labels Lexer: identifiers and keywords up to a space or special
// symbol; symbols matched longest first.
std::vector<Token> Lex(std::string_view in) {
  std::vector<Token> out;
  size_t i = 0;
  while (true) {
    while (i < in.size() && IsSpace(in[i])) ++i;
    if (i == in.size()) {
      out.push_back({Tok::kEnd, ""});
      return out;
    }
    if (IsSpecial(in[i])) {
      std::string buffer;
      std::optional<Token> last;
      while (i < in.size() && IsSpecial(in[i])) {
        buffer += in[i];
        if (std::optional<Tok> t = SymbolToken(buffer)) {
          last = Token{*t, buffer};
          ++i;
        } else if (last) {
          break;
        } else {
          ++i;
        }
      }
      out.push_back(last ? *last
                         : Token{Tok::kError, "error expected: keyword found '" + buffer + "'"});
      continue;
    }
    size_t start = i;
    while (i < in.size() && !IsSpace(in[i]) && !IsSpecial(in[i])) ++i;
    std::string word(in.substr(start, i - start));
    out.push_back({word == "in"      ? Tok::kIn
                   : word == "notin" ? Tok::kNotIn
                                     : Tok::kIdentifier,
                   word});
  }
}

// kube's labels Parser, reduced to what decides its error messages.
class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  std::optional<std::string> Parse() {
    while (true) {
      Token t = Lookahead(true);
      if (t.tok == Tok::kIdentifier || t.tok == Tok::kDoesNotExist) {
        if (std::optional<std::string> e = Requirement())
          return "unable to parse requirement: " + *e;
        Token next = Consume(true);
        if (next.tok == Tok::kEnd) return std::nullopt;
        if (next.tok != Tok::kComma) {
          return "found '" + next.literal + "', expected: ',' or 'end of string'";
        }
        Token after = Lookahead(true);
        if (after.tok != Tok::kIdentifier && after.tok != Tok::kDoesNotExist) {
          return "found '" + after.literal + "', expected: identifier after ','";
        }
      } else if (t.tok == Tok::kEnd) {
        return std::nullopt;
      } else {
        return "found '" + t.literal + "', expected: !, identifier, or 'end of string'";
      }
    }
  }

 private:
  // In a value context the keywords in/notin are identifiers.
  Token Lookahead(bool values) const { return AsContext(tokens_[pos_], values); }
  Token Consume(bool values) {
    Token t = AsContext(tokens_[pos_], values);
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  static Token AsContext(Token t, bool values) {
    if (values && (t.tok == Tok::kIn || t.tok == Tok::kNotIn)) t.tok = Tok::kIdentifier;
    return t;
  }

  std::optional<std::string> Requirement() {
    Token key = Consume(true);
    bool not_exists = key.tok == Tok::kDoesNotExist;
    if (not_exists) key = Consume(true);
    if (key.tok != Tok::kIdentifier) return "found '" + key.literal + "', expected: identifier";
    Token next = Lookahead(true);
    if (next.tok == Tok::kEnd || next.tok == Tok::kComma || not_exists) return std::nullopt;
    Token op = Consume(false);
    switch (op.tok) {
      case Tok::kIn:
      case Tok::kNotIn: return Values();
      case Tok::kEquals:
      case Tok::kDoubleEquals:
      case Tok::kNotEquals:
      case Tok::kGreater:
      case Tok::kLess: {
        Token v = Lookahead(true);
        if (v.tok == Tok::kEnd || v.tok == Tok::kComma) return std::nullopt;
        v = Consume(true);
        if (v.tok == Tok::kIdentifier) return std::nullopt;
        return "found '" + v.literal + "', expected: identifier";
      }
      default: return "found '" + op.literal + "', expected: in, notin, =, ==, !=, gt, lt";
    }
  }

  std::optional<std::string> Values() {
    Token open = Consume(true);
    if (open.tok != Tok::kOpenPar) return "found '" + open.literal + "' expected: '('";
    Token first = Lookahead(true);
    if (first.tok == Tok::kClosedPar) {
      Consume(true);
      return std::nullopt;
    }
    if (first.tok != Tok::kIdentifier && first.tok != Tok::kComma) {
      return "found '" + first.literal + "', expected: ',', ')' or identifier";
    }
    while (true) {
      Token t = Consume(true);
      if (t.tok == Tok::kIdentifier) {
        Token after = Lookahead(true);
        if (after.tok == Tok::kComma) continue;
        if (after.tok == Tok::kClosedPar) break;
        return "found '" + after.literal + "', expected: ',' or ')'";
      }
      if (t.tok != Tok::kComma) return "found '" + t.literal + "', expected: ',', or identifier";
      Token after = Lookahead(true);
      if (after.tok == Tok::kClosedPar) break;
      if (after.tok == Tok::kComma) Consume(true);
    }
    if (Consume(true).tok != Tok::kClosedPar) {
      return "found '" + first.literal + "', expected: ')'";
    }
    return std::nullopt;
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<std::string> LabelSelectorSyntaxError(std::string_view selector) {
  return Parser(Lex(selector)).Parse();
}

}  // namespace routestatus::apiserver
