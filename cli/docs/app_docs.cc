#include "app_docs.h"

#include <sstream>
#include <vector>

namespace memplan::cli {
namespace {

std::vector<const CLI::App*> commands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_group().empty()) out.push_back(sub);  // an empty group hides a command from --help
  return out;
}

std::vector<const CLI::Option*> options(const CLI::App& app, bool positional) {
  std::vector<const CLI::Option*> out;
  for (const CLI::Option* o : app.get_options([](const CLI::Option*) { return true; }))
    if (o->get_positional() == positional && !o->get_group().empty()) out.push_back(o);
  return out;
}

bool takes_value(const CLI::Option* o) {
  return o->get_type_size() > 0;
}

// The choices a value can take, where a validator lists them ("TEXT:{a,b,c}").
std::vector<std::string> choices(const CLI::Option* o) {
  std::vector<std::string> out;
  const std::string type = o->get_type_name();
  const size_t open = type.find('{'), close = type.find('}', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos) return out;
  std::stringstream list(type.substr(open + 1, close - open - 1));
  for (std::string item; std::getline(list, item, ',');) out.push_back(item);
  return out;
}

std::vector<std::string> flag_names(const CLI::Option* o) {
  std::vector<std::string> names;
  for (const auto& l : o->get_lnames()) names.push_back("--" + l);
  for (const auto& s : o->get_snames()) names.push_back("-" + s);
  return names;
}

// roff: backslashes escaped, a line never starting with a control character, '-' as a real hyphen in names.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

std::string roff_name(const std::string& name) {
  std::string out;
  for (char c : name) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

void man_options(std::ostream& out, const CLI::App& app) {
  for (const CLI::Option* o : options(app, true))
    out << ".TP\n\\fI" << roff(o->get_name()) << "\\fR\n" << roff(o->get_description()) << "\n";
  for (const CLI::Option* o : options(app, false)) {
    out << ".TP\n";
    const auto names = flag_names(o);
    for (size_t i = 0; i < names.size(); ++i) out << (i ? ", " : "") << "\\fB" << roff_name(names[i]) << "\\fR";
    if (takes_value(o)) out << " \\fI" << roff(o->get_type_name()) << "\\fR";
    out << "\n" << roff(o->get_description());
    if (!o->get_default_str().empty()) out << " (default: " << roff(o->get_default_str()) << ")";
    out << "\n";
  }
}

std::string single_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A description for zsh's _arguments and _describe: one line, brackets and colons escaped.
std::string zsh_text(const std::string& text) {
  std::string out;
  for (char c : first_line(text).substr(0, 120)) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string man_page(const CLI::App& app, const std::string& summary, const std::string& version) {
  std::ostringstream out;
  const std::string name = app.get_name();
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  out << ".TH " << roff_name(upper) << " 1 \"\" \"" << roff(name) << " " << roff(version) << "\" \"User Commands\"\n";
  out << ".SH NAME\n" << roff_name(name) << " \\- " << roff(summary) << "\n";
  const auto subs = commands(app);
  out << ".SH SYNOPSIS\n\\fB" << roff_name(name) << "\\fR ";
  if (subs.empty()) {
    out << "[\\fIOPTIONS\\fR]";
    for (const CLI::Option* o : options(app, true)) out << " \\fI" << roff(o->get_name()) << "\\fR";
  } else {
    out << "\\fICOMMAND\\fR [\\fIOPTIONS\\fR]";
  }
  out << "\n.SH DESCRIPTION\n" << roff(app.get_description()) << "\n";
  out << ".SH OPTIONS\n";
  man_options(out, app);
  if (!subs.empty()) {
    out << ".SH COMMANDS\n";
    for (const CLI::App* sub : subs) {
      out << ".SS \"" << roff_name(name) << " " << roff_name(sub->get_name()) << "\"\n"
          << roff(sub->get_description()) << "\n";
      man_options(out, *sub);
      if (!sub->get_footer().empty()) out << ".PP\n.nf\n" << roff(sub->get_footer()) << "\n.fi\n";
    }
  }
  if (!app.get_footer().empty()) out << ".SH EXAMPLES\n.nf\n" << roff(app.get_footer()) << "\n.fi\n";
  out << ".SH SEE ALSO\n"
      << (name == "memplan" ? "\\fBmemplan\\-replay\\fR(1)" : "\\fBmemplan\\fR(1)")
      << ", /usr/share/doc/memplan/README.md\n";
  return out.str();
}

std::string bash_completion(const CLI::App& app) {
  const std::string name = app.get_name();
  std::string fn = "_" + name;
  for (char& c : fn)
    if (c == '-') c = '_';
  std::ostringstream out;
  out << "# bash completion for " << name << " (generated by '" << name << " completion bash')\n";
  out << fn << "() {\n  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" cmd=\"\" i\n";
  const auto subs = commands(app);
  std::string names;
  for (const CLI::App* sub : subs) names += (names.empty() ? "" : " ") + sub->get_name();
  out << "  for ((i = 1; i < COMP_CWORD; i++)); do\n    case \"${COMP_WORDS[i]}\" in\n";
  if (!subs.empty())
    out << "      " << [&] {
      std::string alts;
      for (const CLI::App* sub : subs) alts += (alts.empty() ? "" : "|") + sub->get_name();
      return alts;
    }() << ") cmd=\"${COMP_WORDS[i]}\"; break ;;\n";
  out << "    esac\n  done\n  local opts=\"\" valued=\"\"\n  case \"$cmd\" in\n";
  auto option_case = [&](const std::string& label, const CLI::App& a) {
    std::string opts, valued;
    for (const CLI::Option* o : options(a, false))
      for (const auto& n : flag_names(o)) {
        opts += (opts.empty() ? "" : " ") + n;
        if (takes_value(o)) valued += " " + n;
      }
    out << "    " << label << ") opts=" << single_quoted(opts) << "; valued=" << single_quoted(valued + " ") << " ;;\n";
  };
  option_case("\"\"", app);
  for (const CLI::App* sub : subs) option_case(sub->get_name(), *sub);
  out << "  esac\n";
  // An option's value: its choices where known, else a file name.
  out << "  if [[ \" $valued \" == *\" $prev \"* ]]; then\n    case \"$cmd $prev\" in\n";
  auto choice_cases = [&](const std::string& label, const CLI::App& a) {
    for (const CLI::Option* o : options(a, false)) {
      const auto values = choices(o);
      if (values.empty() || !takes_value(o)) continue;
      std::string words;
      for (const auto& v : values) words += (words.empty() ? "" : " ") + v;
      for (const auto& n : flag_names(o))
        out << "      \"" << label << " " << n << "\") COMPREPLY=($(compgen -W " << single_quoted(words)
            << " -- \"$cur\")); return ;;\n";
    }
  };
  choice_cases("", app);
  for (const CLI::App* sub : subs) choice_cases(sub->get_name(), *sub);
  out << "    esac\n    COMPREPLY=($(compgen -f -- \"$cur\")); return\n  fi\n";
  out << "  if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")); return; fi\n";
  if (!subs.empty())
    out << "  if [[ -z \"$cmd\" ]]; then COMPREPLY=($(compgen -W " << single_quoted(names)
        << " -- \"$cur\")); return; fi\n";
  // Positional choices (completion SHELL).
  out << "  case \"$cmd\" in\n";
  for (const CLI::App* sub : subs)
    for (const CLI::Option* o : options(*sub, true)) {
      const auto values = choices(o);
      if (values.empty()) continue;
      std::string words;
      for (const auto& v : values) words += (words.empty() ? "" : " ") + v;
      out << "    " << sub->get_name() << ") COMPREPLY=($(compgen -W " << single_quoted(words)
          << " -- \"$cur\")); return ;;\n";
    }
  out << "  esac\n  COMPREPLY=($(compgen -f -- \"$cur\"))\n}\ncomplete -o filenames -F " << fn << " " << name << "\n";
  return out.str();
}

std::string zsh_completion(const CLI::App& app) {
  const std::string name = app.get_name();
  std::string fn = "_" + name;
  for (char& c : fn)
    if (c == '-') c = '_';
  std::ostringstream out;
  out << "#compdef " << name << "\n# zsh completion for " << name << " (generated by '" << name
      << " completion zsh')\n";
  auto arguments = [&](const CLI::App& a, const std::string& indent) {
    out << indent << "_arguments -s";
    for (const CLI::Option* o : options(a, false)) {
      const auto names = flag_names(o);
      const std::string help = "[" + zsh_text(o->get_description()) + "]";
      std::string action;
      if (takes_value(o)) {
        const auto values = choices(o);
        std::string list;
        for (const auto& v : values) list += (list.empty() ? "" : " ") + v;
        const std::string type = o->get_type_name();
        action = ":" + zsh_text(type.substr(0, type.find(':'))) + ":" + (values.empty() ? "_files" : "(" + list + ")");
      }
      for (const auto& n : names) out << " \\\n" << indent << "  " << single_quoted(n + help + action);
    }
    for (const CLI::Option* o : options(a, true)) {
      const auto values = choices(o);
      std::string list;
      for (const auto& v : values) list += (list.empty() ? "" : " ") + v;
      out << " \\\n"
          << indent << "  "
          << single_quoted("*:" + zsh_text(o->get_name()) + ":" + (values.empty() ? "_files" : "(" + list + ")"));
    }
    out << "\n";
  };
  out << fn << "() {\n";
  const auto subs = commands(app);
  if (subs.empty()) {
    arguments(app, "  ");
  } else {
    out << "  local -a commands\n  commands=(\n";
    for (const CLI::App* sub : subs)
      out << "    " << single_quoted(sub->get_name() + ":" + zsh_text(sub->get_description())) << "\n";
    out << "  )\n  if (( CURRENT == 2 )); then\n    _describe 'command' commands\n    return\n  fi\n";
    out << "  local cmd=$words[2]\n  shift words\n  (( CURRENT-- ))\n  case $cmd in\n";
    for (const CLI::App* sub : subs) {
      out << "    " << sub->get_name() << ")\n";
      arguments(*sub, "      ");
      out << "      ;;\n";
    }
    out << "  esac\n";
  }
  out << "}\n" << fn << " \"$@\"\n";
  return out.str();
}

}  // namespace memplan::cli
