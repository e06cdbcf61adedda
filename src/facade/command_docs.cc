#include "src/facade/command_docs.h"

#include <glog/logging.h>

#include <cctype>

#include "helio/base/strings.h"

namespace damselfly::facade {

namespace {

// Splits into words and the single-character tokens [ ] < > |.
std::vector<std::string_view> Tokenize(std::string_view syntax) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < syntax.size()) {
    char c = syntax[i];
    if (c == ' ') {
      ++i;
    } else if (c == '[' || c == ']' || c == '<' || c == '>' || c == '|') {
      tokens.push_back(syntax.substr(i++, 1));
    } else {
      size_t end = syntax.find_first_of(" []<>|", i);
      if (end == std::string_view::npos) end = syntax.size();
      tokens.push_back(syntax.substr(i, end - i));
      i = end;
    }
  }
  return tokens;
}

bool IsToken(std::string_view word) {
  bool has_letter = false;
  for (char c : word) {
    if (std::islower(static_cast<unsigned char>(c))) return false;
    has_letter |= std::isupper(static_cast<unsigned char>(c)) != 0;
  }
  return has_letter;
}

std::string TypeOf(std::string_view name) {
  if (name == "key" || name == "newkey") return "key";
  if (name == "pattern") return "pattern";
  if (name.substr(0, 9) == "unix-time") return "unix-time";
  for (std::string_view integer : {"seconds", "milliseconds", "cursor", "count", "offset", "start",
                                   "end", "increment", "decrement", "index", "protover",
                                   "client-id"}) {
    if (name == integer) return "integer";
  }
  return "string";
}

class SyntaxParser {
 public:
  explicit SyntaxParser(std::vector<std::string_view> tokens) : tokens_(std::move(tokens)) {}

  // The whole syntax: like the inside of [ ], minus the optionality.
  std::vector<DocArg> ParseAll() {
    DocArg top = Alternatives();
    DCHECK_EQ(pos_, tokens_.size()) << "unbalanced syntax";
    if (top.type == "block" && !top.optional) return std::move(top.children);
    return {std::move(top)};
  }

 private:
  bool AtEnd() const { return pos_ >= tokens_.size(); }
  std::string_view Peek() const { return AtEnd() ? std::string_view() : tokens_[pos_]; }

  // Items until ']', '>' or '|' or the end.
  std::vector<DocArg> Sequence() {
    std::vector<DocArg> items;
    while (!AtEnd() && Peek() != "]" && Peek() != ">" && Peek() != "|") {
      if (Peek() == "...") {  // repeats the previous item
        ++pos_;
        if (!items.empty()) items.back().multiple = true;
        continue;
      }
      DocArg item = Item();
      // "x [x ...]" is one argument that repeats: redis-cli prints it that way itself.
      if (!items.empty() && item.optional && item.multiple && item.children.empty() &&
          items.back().name == item.name && items.back().token == item.token) {
        items.back().multiple = true;
        continue;
      }
      items.push_back(std::move(item));
    }
    return items;
  }

  DocArg Item() {
    std::string_view word = tokens_[pos_++];
    if (word == "[") {
      DocArg group = Alternatives();
      DCHECK_EQ(Peek(), "]");
      ++pos_;
      group.optional = true;
      return group;
    }
    if (word == "<") {  // a required group: "<BEFORE | AFTER>", as Redis's docs write it
      DocArg group = Alternatives();
      DCHECK_EQ(Peek(), ">");
      ++pos_;
      return group;
    }
    DocArg arg;
    if (IsToken(word)) {
      arg.token = std::string(word);
      if (!AtEnd() && Peek() != "..." && Peek() != "[" && Peek() != "]" && Peek() != "<" &&
          Peek() != ">" && Peek() != "|" && !IsToken(Peek())) {
        std::string_view value = tokens_[pos_++];  // TOKEN value
        arg.name = std::string(value);
        arg.type = TypeOf(value);
      } else {
        arg.name = helio::AsciiStrToLower(word);
        arg.type = "pure-token";
      }
    } else {
      arg.name = std::string(word);
      arg.type = TypeOf(word);
    }
    return arg;
  }

  // Sequences separated by '|': one sequence is a block (or its only item), several a oneof.
  DocArg Alternatives() {
    std::vector<DocArg> choices;
    while (true) {
      std::vector<DocArg> seq = Sequence();
      choices.push_back(seq.size() == 1 ? std::move(seq[0]) : Block(std::move(seq)));
      if (Peek() != "|") break;
      ++pos_;
    }
    if (choices.size() == 1) return std::move(choices[0]);
    DocArg oneof;
    oneof.type = "oneof";
    for (const DocArg& choice : choices) {
      if (!oneof.name.empty()) oneof.name += "-";
      oneof.name += choice.name;
    }
    oneof.children = std::move(choices);
    return oneof;
  }

  static DocArg Block(std::vector<DocArg> items) {
    DocArg block;
    block.type = "block";
    block.name = items.empty() ? "block" : items[0].name;
    block.children = std::move(items);
    return block;
  }

  std::vector<std::string_view> tokens_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<DocArg> ParseSyntax(std::string_view syntax) {
  return SyntaxParser(Tokenize(syntax)).ParseAll();
}

void SendDocArgs(const std::vector<DocArg>& args, ReplyBuilder* rb) {
  rb->StartArray(args.size());
  for (const DocArg& arg : args) {
    size_t fields = 2 + !arg.token.empty() + (arg.optional || arg.multiple) + !arg.children.empty();
    rb->StartMap(fields);
    rb->SendBulk("name");
    rb->SendBulk(arg.name);
    rb->SendBulk("type");
    rb->SendBulk(arg.type);
    if (!arg.token.empty()) {
      rb->SendBulk("token");
      rb->SendBulk(arg.token);
    }
    if (arg.optional || arg.multiple) {
      rb->SendBulk("flags");
      rb->StartSet(arg.optional + arg.multiple);
      if (arg.optional) rb->SendSimpleString("optional");
      if (arg.multiple) rb->SendSimpleString("multiple");
    }
    if (!arg.children.empty()) {
      rb->SendBulk("arguments");
      SendDocArgs(arg.children, rb);
    }
  }
}

}  // namespace damselfly::facade
