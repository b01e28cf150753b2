// docs/configuration.md's option table is the one `--help` prints: this test
// fails when they differ. ROUTESTATUS_UPDATE_DOCS=1 rewrites the document
// instead (`make docs`).
#include "cmd/route-status-controller/config_reference.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cmd/route-status-controller/config.h"

namespace routestatus::cmd {
namespace {

const std::string kConfigurationDoc = std::string(ROUTESTATUS_SOURCE_DIR) + "/docs/configuration.md";

std::string ReadDoc(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ConfigReferenceTest, DocumentMatchesTheHelpTable) {
  std::string doc = ReadDoc(kConfigurationDoc);
  ASSERT_FALSE(doc.empty()) << kConfigurationDoc << " is missing";
  std::optional<std::string> regenerated =
      ReplaceGeneratedOptions(doc, ConfigurationReferenceMarkdown());
  ASSERT_TRUE(regenerated.has_value()) << kConfigurationDoc << " lacks the markers "
                                       << kOptionsBeginMarker << " ... " << kOptionsEndMarker;
  const char* update = std::getenv("ROUTESTATUS_UPDATE_DOCS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(kConfigurationDoc, std::ios::trunc) << *regenerated;
    GTEST_SKIP() << "rewrote " << kConfigurationDoc;
  }
  EXPECT_EQ(doc, *regenerated) << kConfigurationDoc
                               << " differs from `--help`'s option table: run `make docs`";
}

TEST(ConfigReferenceTest, EveryHelpOptionHasOneRowWithItsEnvironment) {
  std::string table = ConfigurationReferenceMarkdown();
  std::string help = HelpText();
  for (const OptionReference& row : OptionReferences()) {
    EXPECT_NE(help.find("  " + row.flag + row.type + "\n"), std::string::npos) << row.flag;
    std::string cell = "| `" + row.flag + "`";
    size_t at = table.find(cell);
    ASSERT_NE(at, std::string::npos) << row.flag;
    EXPECT_EQ(table.find(cell, at + 1), std::string::npos) << row.flag << " twice";
    std::string line = table.substr(at, table.find('\n', at) - at);
    for (const std::string& env : row.env) EXPECT_NE(line.find("`" + env + "`"), std::string::npos) << env;
  }
}

TEST(ConfigReferenceTest, CellsEscapePipes) {
  std::string table = ConfigurationReferenceMarkdown();
  // info|warning|error is one cell of --log-level's row, not three.
  EXPECT_NE(table.find("info\\|warning\\|error"), std::string::npos);
  // <subdomain>.<domain> is text, not two HTML tags.
  EXPECT_NE(table.find("host &lt;subdomain&gt;.&lt;domain&gt;"), std::string::npos);
  EXPECT_EQ(table.find("<subdomain>"), std::string::npos);
}

TEST(ConfigReferenceTest, ReplaceNeedsBothMarkersInOrder) {
  std::string doc = std::string("intro\n") + kOptionsBeginMarker + "\nold\n" + kOptionsEndMarker + "\nend\n";
  EXPECT_EQ(*ReplaceGeneratedOptions(doc, "new\n"),
            std::string("intro\n") + kOptionsBeginMarker + "\nnew\n" + kOptionsEndMarker + "\nend\n");
  EXPECT_FALSE(ReplaceGeneratedOptions("no markers", "x").has_value());
  EXPECT_FALSE(ReplaceGeneratedOptions(std::string(kOptionsEndMarker) + kOptionsBeginMarker, "x").has_value());
}

}  // namespace
}  // namespace routestatus::cmd
