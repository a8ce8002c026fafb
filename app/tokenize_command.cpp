// lanec tokenize FILE TEXT: the token ids of TEXT under FILE's vocabulary, on
// one line; lanec tokenize FILE --decode "ID ID ...": the text of the ids.
// Works on vocabulary-only GGUF files (no tensors).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app/command.h"
#include "app/token_ids.h"
#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/tokenizer/gguf_vocab.h"
#include "lib/tokenizer/tokenizer.h"

namespace lanec::app {
namespace {

struct TokenizeArgs {
  std::string path;
  std::string text;
  std::string decode;
  bool decode_given = false;
  bool no_add_special = false;
  bool no_parse_special = false;
};

void run_tokenize(const TokenizeArgs& args) {
  const GgufFile file = GgufFile::open(args.path);
  const Tokenizer tokenizer = Tokenizer::from_vocab(load_vocab(file));
  if (args.decode_given) {
    const std::string text = tokenizer.decode(parse_token_ids(args.decode, "--decode"));
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    return;
  }
  const auto ids = tokenizer.encode(args.text, !args.no_add_special, !args.no_parse_special);
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) line += ' ';
    line += std::to_string(ids[i]);
  }
  std::printf("%s\n", line.c_str());
}

const RegisterCommand registration(30, "tokenize", [](CLI::App& root) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* cmd = root.add_subcommand("tokenize", "Token ids of a text with a GGUF file's vocabulary (or --decode ids)");
  cmd->add_option("file", args->path, "GGUF file (a vocabulary-only file is enough)")->required();
  CLI::Option* text = cmd->add_option("text", args->text, "Text to encode");
  CLI::Option* decode = cmd->add_option("--decode", args->decode, "Token ids to decode, e.g. \"9707 1879\"");
  text->excludes(decode);
  decode->excludes(text);
  cmd->add_flag("--no-add-special", args->no_add_special, "Do not add BOS/EOS even if the vocabulary asks");
  cmd->add_flag("--no-parse-special", args->no_parse_special,
                "Treat text like <|im_start|> as plain text, not as a control token");
  cmd->callback([args, text, decode] {
    if (text->count() == 0 && decode->count() == 0) {
      throw Error("tokenize: give the TEXT to encode or --decode \"ID ID ...\"");
    }
    TokenizeArgs run_args = *args;
    run_args.decode_given = decode->count() > 0;
    run_tokenize(run_args);
  });
});

}  // namespace
}  // namespace lanec::app
