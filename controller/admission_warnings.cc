#include "controller/admission_warnings.h"

#include <cctype>

#include "controller/hostname_template.h"

namespace routestatus::controller {
namespace {

void DomainWarnings(const char* flag, const char* env, const std::vector<std::string>& domains,
                    const char* effect, std::vector<std::string>& out) {
  for (const std::string& d : domains) {
    const bool prefixed = d.rfind("*.", 0) == 0 || d.rfind('.', 0) == 0;
    std::string plain = prefixed ? d.substr(d.find('.') + 1) : d;
    bool upper = false;
    for (char& c : plain) {
      upper = upper || (c >= 'A' && c <= 'Z');
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (!prefixed && !upper) continue;
    out.push_back(std::string("--") + flag + " (" + env + ") entry \"" + d +
                  "\" matches no valid host: domains are matched literally, as openshift-router "
                  "does" + (upper ? ", and a valid host is lower case" : "") + ", so " + effect +
                  "; write \"" + plain + "\" for that domain and every host under it");
  }
}

}  // namespace

std::vector<std::string> AdmissionOptionWarnings(const AdmissionOptions& options) {
  std::vector<std::string> out;
  DomainWarnings("allowed-domains", "ROUTER_ALLOWED_DOMAINS", options.allowed_domains,
                 "it admits nothing", out);
  DomainWarnings("denied-domains", "ROUTER_DENIED_DOMAINS", options.denied_domains,
                 "it denies nothing", out);
  const std::string& tmpl = options.hostname_template;
  if (tmpl.empty()) return out;
  if (std::vector<std::string> unknown = UnknownTemplateKeys(tmpl); !unknown.empty()) {
    out.push_back("--hostname-template (ROUTER_SUBDOMAIN) \"" + tmpl + "\" names unknown key \"" +
                  unknown.front() + "\": it gives no route a host (routes without spec.host "
                  "are rejected NoHostValue, as openshift-router does); use $name / ${name} "
                  "and $namespace / ${namespace} only");
    return out;
  }
  kubeclient::ObjectMeta sample;
  sample.name = "name";
  sample.namespace_name = "namespace";
  const std::string host = ExpandHostnameTemplate(tmpl, sample).value_or("");
  if (std::string bad = ValidateHost(host); !bad.empty()) {
    out.push_back("--hostname-template (ROUTER_SUBDOMAIN) \"" + tmpl + "\" gives hosts such as \"" +
                  host + "\" that are not valid (" + bad + "): every route it names is "
                  "rejected InvalidHost; fix the template");
  }
  return out;
}

}  // namespace routestatus::controller
