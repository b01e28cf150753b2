#include "apiserver/json_path.h"

#include <cstdlib>

namespace routestatus::apiserver {

using nlohmann::json;
using StepList = std::vector<std::shared_ptr<const JsonPath::Step>>;

struct JsonPath::Step {
  enum class Kind { kField, kIndex, kAll, kDescend, kFilter };
  Kind kind = Kind::kField;
  std::string name;        // kField
  long long index = 0;     // kIndex
  StepList sub;            // kFilter: the path after '@'
  std::string op;          // kFilter: "" = the path exists
  json literal;            // kFilter: right-hand side
};

namespace {

using Step = JsonPath::Step;
using Kind = Step::Kind;

bool IsNameEnd(char c) {
  switch (c) {
    case '.': case '[': case ']': case '{': case '}': case '(': case ')':
    case '=': case '!': case '<': case '>': case ' ': case '\t': case '\n':
    case '\r': case '"': case '\'': case '@': case '$': case ',':
      return true;
    default:
      return false;
  }
}

// A recursive-descent parser over one path text. Stops at the first error.
class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  bool ParseSteps(bool in_filter, StepList* out) {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (in_filter && (c == ' ' || c == ')' || c == '=' || c == '!' || c == '<' || c == '>')) {
        return true;
      }
      if (c == '.') {
        if (!ParseDot(in_filter, out)) return false;
      } else if (c == '[') {
        if (!ParseBracket(out)) return false;
      } else {
        return Fail(std::string("unexpected '") + c + "'");
      }
    }
    return true;
  }

  bool Fail(const std::string& what) {
    if (error_.empty()) error_ = what + " at " + std::to_string(pos_);
    return false;
  }
  bool AtEnd() const { return pos_ >= s_.size(); }
  size_t pos() const { return pos_; }
  const std::string& error() const { return error_; }

 private:
  bool ParseDot(bool in_filter, StepList* out) {
    ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      out->push_back(Make(Kind::kDescend));
      if (pos_ < s_.size() && s_[pos_] == '[') return true;
      if (pos_ >= s_.size()) return Fail("path ends after '..'");
    }
    if (pos_ >= s_.size() || (in_filter && IsNameEnd(s_[pos_]) && s_[pos_] != '*')) {
      // "." alone (or "@." in a filter) selects the current value.
      if (out->empty() || in_filter) return true;
      return Fail("path ends with '.'");
    }
    if (s_[pos_] == '*') {
      ++pos_;
      out->push_back(Make(Kind::kAll));
      return true;
    }
    if (s_[pos_] == '[') return true;
    std::string name;
    while (pos_ < s_.size() && !IsNameEnd(s_[pos_])) {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      name += s_[pos_++];
    }
    if (name.empty()) return Fail("expected a field name");
    auto step = std::make_shared<Step>();
    step->name = std::move(name);
    out->push_back(step);
    return true;
  }

  bool ParseBracket(StepList* out) {
    ++pos_;
    SkipSpaces();
    if (pos_ >= s_.size()) return Fail("unterminated '['");
    char c = s_[pos_];
    if (c == '*') {
      ++pos_;
      out->push_back(Make(Kind::kAll));
    } else if (c == '\'' || c == '"') {
      std::string name;
      if (!ParseQuoted(&name)) return false;
      auto step = std::make_shared<Step>();
      step->name = std::move(name);
      out->push_back(step);
    } else if (c == '?') {
      if (!ParseFilter(out)) return false;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t start = pos_;
      if (c == '-') ++pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      std::string digits(s_.substr(start, pos_ - start));
      if (digits == "-" || digits.size() > 18) return Fail("bad array index '" + digits + "'");
      SkipSpaces();
      if (pos_ < s_.size() && s_[pos_] == ':') return Fail("array slices are not supported");
      auto step = std::make_shared<Step>();
      step->kind = Kind::kIndex;
      step->index = std::strtoll(digits.c_str(), nullptr, 10);
      out->push_back(step);
    } else {
      return Fail(std::string("unexpected '") + c + "' after '['");
    }
    SkipSpaces();
    if (pos_ >= s_.size() || s_[pos_] != ']') return Fail("expected ']'");
    ++pos_;
    return true;
  }

  bool ParseFilter(StepList* out) {
    ++pos_;  // '?'
    if (pos_ >= s_.size() || s_[pos_] != '(') return Fail("expected '(' after '?'");
    ++pos_;
    SkipSpaces();
    if (pos_ >= s_.size() || s_[pos_] != '@') return Fail("a filter must start with '@'");
    ++pos_;
    auto step = std::make_shared<Step>();
    step->kind = Kind::kFilter;
    if (!ParseSteps(/*in_filter=*/true, &step->sub)) return false;
    SkipSpaces();
    if (pos_ >= s_.size()) return Fail("unterminated filter");
    if (s_[pos_] != ')') {
      for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
        size_t len = std::char_traits<char>::length(op);
        if (s_.substr(pos_, len) == op) {
          step->op = op;
          pos_ += len;
          break;
        }
      }
      if (step->op.empty()) return Fail("expected a comparison operator");
      SkipSpaces();
      if (!ParseLiteral(&step->literal)) return false;
      SkipSpaces();
      if (pos_ >= s_.size() || s_[pos_] != ')') return Fail("expected ')'");
    }
    ++pos_;  // ')'
    out->push_back(step);
    return true;
  }

  bool ParseLiteral(json* out) {
    if (pos_ >= s_.size()) return Fail("expected a value");
    char c = s_[pos_];
    if (c == '\'' || c == '"') {
      std::string text;
      if (!ParseQuoted(&text)) return false;
      *out = text;
      return true;
    }
    size_t start = pos_;
    while (pos_ < s_.size() && !IsNameEnd(s_[pos_])) ++pos_;
    // Why: numbers may contain '.', which ends names.
    while (pos_ < s_.size() && (s_[pos_] == '.' || (s_[pos_] >= '0' && s_[pos_] <= '9') ||
                                s_[pos_] == 'e' || s_[pos_] == 'E' || s_[pos_] == '+' ||
                                s_[pos_] == '-')) {
      ++pos_;
    }
    std::string word(s_.substr(start, pos_ - start));
    if (word == "true" || word == "false") {
      *out = word == "true";
      return true;
    }
    if (word == "null") {
      *out = nullptr;
      return true;
    }
    json number = json::parse(word, nullptr, false);
    if (word.empty() || number.is_discarded() || !number.is_number()) {
      pos_ = start;
      return Fail("expected a quoted string, number, true, false or null");
    }
    *out = number;
    return true;
  }

  bool ParseQuoted(std::string* out) {
    char quote = s_[pos_++];
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      *out += s_[pos_++];
    }
    if (pos_ >= s_.size()) return Fail(std::string("unterminated ") + quote + " string");
    ++pos_;
    return true;
  }

  void SkipSpaces() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }

  static std::shared_ptr<Step> Make(Kind kind) {
    auto step = std::make_shared<Step>();
    step->kind = kind;
    return step;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

bool Compare(const json& lhs, const std::string& op, const json& rhs) {
  int order;
  if (lhs.is_number() && rhs.is_number()) {
    double a = lhs.get<double>(), b = rhs.get<double>();
    order = a < b ? -1 : (a > b ? 1 : 0);
  } else if (lhs.is_string() && rhs.is_string()) {
    order = lhs.get_ref<const std::string&>().compare(rhs.get_ref<const std::string&>());
  } else {
    bool equal = lhs == rhs;
    if (op == "==") return equal;
    if (op == "!=") return !equal;
    return false;  // no order between different types
  }
  if (op == "==") return order == 0;
  if (op == "!=") return order != 0;
  if (op == "<") return order < 0;
  if (op == "<=") return order <= 0;
  if (op == ">") return order > 0;
  return order >= 0;
}

std::vector<const json*> EvaluateSteps(const StepList& steps, const json& root) {
  std::vector<const json*> current{&root};
  std::vector<const json*> next;
  for (const auto& step : steps) {
    next.clear();
    for (const json* node : current) {
      switch (step->kind) {
        case Kind::kField:
          if (node->is_object()) {
            auto it = node->find(step->name);
            if (it != node->end()) next.push_back(&*it);
          }
          break;
        case Kind::kIndex:
          if (node->is_array()) {
            long long size = static_cast<long long>(node->size());
            long long i = step->index < 0 ? size + step->index : step->index;
            if (i >= 0 && i < size) next.push_back(&(*node)[static_cast<size_t>(i)]);
          }
          break;
        case Kind::kAll:
          if (node->is_array() || node->is_object()) {
            for (const auto& child : *node) next.push_back(&child);
          }
          break;
        case Kind::kDescend: {
          // Why: an explicit stack, so a deeply nested object cannot exhaust ours.
          std::vector<const json*> stack{node};
          while (!stack.empty()) {
            const json* n = stack.back();
            stack.pop_back();
            next.push_back(n);
            if (n->is_array() || n->is_object()) {
              std::vector<const json*> children;
              for (const auto& child : *n) children.push_back(&child);
              stack.insert(stack.end(), children.rbegin(), children.rend());
            }
          }
          break;
        }
        case Kind::kFilter:
          if (node->is_array()) {
            for (const auto& element : *node) {
              std::vector<const json*> lhs = EvaluateSteps(step->sub, element);
              if (lhs.empty()) continue;
              if (step->op.empty() || Compare(*lhs.front(), step->op, step->literal)) {
                next.push_back(&element);
              }
            }
          }
          break;
      }
    }
    current.swap(next);
    if (current.empty()) break;
  }
  return current;
}

}  // namespace

std::optional<JsonPath> JsonPath::Parse(std::string_view text, std::string* error) {
  std::string_view s = Trim(text);
  auto fail = [&](const std::string& what) -> std::optional<JsonPath> {
    if (error != nullptr) *error = "invalid jsonpath \"" + std::string(text) + "\": " + what;
    return std::nullopt;
  };
  if (!s.empty() && s.front() == '{') {
    if (s.back() != '}') return fail("unterminated '{'");
    s = Trim(s.substr(1, s.size() - 2));
  }
  if (s.empty()) return fail("empty path");
  if (s.front() == '$') s.remove_prefix(1);
  if (!s.empty() && s.front() != '.' && s.front() != '[') {
    return fail("a path must start with '.', '[' or '$'");
  }
  Parser parser(s);
  JsonPath path;
  if (!parser.ParseSteps(/*in_filter=*/false, &path.steps_)) return fail(parser.error());
  if (!parser.AtEnd()) {
    parser.Fail("unexpected trailing text");
    return fail(parser.error());
  }
  path.text_ = std::string(text);
  return path;
}

std::vector<const json*> JsonPath::Evaluate(const json& root) const {
  return EvaluateSteps(steps_, root);
}

std::string JsonPath::Format(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string JsonPath::EvaluateJoined(const json& root, const std::string& separator) const {
  std::string out;
  bool first = true;
  for (const json* v : Evaluate(root)) {
    if (!first) out += separator;
    first = false;
    out += Format(*v);
  }
  return out;
}

}  // namespace routestatus::apiserver
