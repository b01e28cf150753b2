#include "kubeclient/label_selector.h"

#include <algorithm>
#include <cctype>

namespace routestatus::kubeclient {
namespace {

// A tiny cursor over the selector text.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  bool Consume(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) == token) {
      pos_ += token.size();
      return true;
    }
    return false;
  }
  // A key or value: anything up to a delimiter.
  std::string Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == '=' || c == '!' ||
          c == '(' || c == ')') {
        break;
      }
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  // True when the next word is exactly `keyword` followed by a delimiter.
  bool ConsumeKeyword(std::string_view keyword) {
    SkipSpace();
    size_t save = pos_;
    if (Word() == keyword) return true;
    pos_ = save;
    return false;
  }
  size_t pos() const { return pos_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

bool ValidKey(const std::string& key) {
  if (key.empty() || key.size() > 317) return false;
  for (char c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
          c == '/')) {
      return false;
    }
  }
  return true;
}

bool ValidValue(const std::string& value) {
  if (value.size() > 63) return false;
  for (char c : value) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return false;
    }
  }
  return true;
}

Status Bad(std::string_view text, const std::string& why) {
  return Status(StatusCode::kInvalid,
                "invalid label selector \"" + std::string(text) + "\": " + why);
}

}  // namespace

StatusOr<LabelSelector> LabelSelector::Parse(std::string_view text) {
  LabelSelector selector;
  Lexer lex(text);
  if (lex.AtEnd()) return selector;
  while (true) {
    Requirement req;
    if (lex.Consume("!")) {
      req.key = lex.Word();
      req.op = Op::kDoesNotExist;
      if (!ValidKey(req.key)) return Bad(text, "invalid key after '!'");
    } else {
      req.key = lex.Word();
      if (!ValidKey(req.key)) return Bad(text, "invalid or missing key at offset " + std::to_string(lex.pos()));
      if (lex.Consume("==") || lex.Consume("=")) {
        req.op = Op::kEquals;
      } else if (lex.Consume("!=")) {
        req.op = Op::kNotEquals;
      } else if (lex.ConsumeKeyword("in")) {
        req.op = Op::kIn;
      } else if (lex.ConsumeKeyword("notin")) {
        req.op = Op::kNotIn;
      } else {
        req.op = Op::kExists;
      }
      if (req.op == Op::kEquals || req.op == Op::kNotEquals) {
        std::string value = lex.Word();
        if (!ValidValue(value)) return Bad(text, "invalid value for key " + req.key);
        req.values.push_back(value);
      } else if (req.op == Op::kIn || req.op == Op::kNotIn) {
        if (!lex.Consume("(")) return Bad(text, "expected '(' after in/notin");
        while (true) {
          std::string value = lex.Word();
          if (!ValidValue(value)) return Bad(text, "invalid value in set for key " + req.key);
          req.values.push_back(value);
          if (lex.Consume(")")) break;
          if (!lex.Consume(",")) return Bad(text, "expected ',' or ')' in value set");
        }
        std::sort(req.values.begin(), req.values.end());
      }
    }
    selector.requirements_.push_back(std::move(req));
    if (lex.AtEnd()) break;
    if (!lex.Consume(",")) return Bad(text, "expected ',' at offset " + std::to_string(lex.pos()));
  }
  return selector;
}

namespace {

// The selector test over any map-like `labels` (find/end, ->second).
template <typename Map>
bool MatchesAll(const std::vector<LabelSelector::Requirement>& requirements, const Map& labels) {
  using Op = LabelSelector::Op;
  for (const auto& req : requirements) {
    auto it = labels.find(req.key);
    bool has = it != labels.end();
    auto in_values = [&] {
      return has && std::find(req.values.begin(), req.values.end(), it->second) != req.values.end();
    };
    switch (req.op) {
      case Op::kEquals:
      case Op::kIn:
        if (!in_values()) return false;
        break;
      case Op::kNotEquals:
      case Op::kNotIn:
        if (in_values()) return false;
        break;
      case Op::kExists:
        if (!has) return false;
        break;
      case Op::kDoesNotExist:
        if (has) return false;
        break;
    }
  }
  return true;
}

}  // namespace

bool LabelSelector::Matches(const Labels& labels) const { return MatchesAll(requirements_, labels); }

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  return MatchesAll(requirements_, labels);
}

std::string LabelSelector::ToString() const {
  std::string out;
  for (const auto& req : requirements_) {
    if (!out.empty()) out += ",";
    switch (req.op) {
      case Op::kEquals: out += req.key + "=" + req.values[0]; break;
      case Op::kNotEquals: out += req.key + "!=" + req.values[0]; break;
      case Op::kExists: out += req.key; break;
      case Op::kDoesNotExist: out += "!" + req.key; break;
      case Op::kIn:
      case Op::kNotIn: {
        out += req.key + (req.op == Op::kIn ? " in (" : " notin (");
        for (size_t i = 0; i < req.values.size(); ++i) out += (i ? "," : "") + req.values[i];
        out += ")";
        break;
      }
    }
  }
  return out;
}

}  // namespace routestatus::kubeclient
