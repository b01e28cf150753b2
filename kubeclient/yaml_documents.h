#pragma once

#include <sstream>
#include <string>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace routestatus::kubeclient {

// How many YAML documents `text` holds, counting no further than `cap`.
// Why not YAML::LoadAll: yaml-cpp 0.7's LoadAll never returned on some
// mutated inputs (found by DecoderFuzzTest: a kubeconfig parse that
// allocated nodes until the test's timeout); the parser's own events,
// read one document at a time and at most `cap` times, cannot loop, and
// build no nodes. Throws YAML::Exception on a syntax error, as Load does.
// Header-only: the kubeconfig and --config readers both use it and share
// no library but yaml-cpp.
inline int CountYamlDocuments(const std::string& text, int cap = 2) {
  class Ignore final : public YAML::EventHandler {
   public:
    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
  };
  std::stringstream in(text);
  YAML::Parser parser(in);
  Ignore ignore;
  int documents = 0;
  while (documents < cap && parser.HandleNextDocument(ignore)) ++documents;
  return documents;
}

}  // namespace routestatus::kubeclient
