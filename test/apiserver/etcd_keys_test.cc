// The etcd key layout of the embedded server's etcd storage: kube's.

#include <string>

#include <gtest/gtest.h>

#include "apiserver/etcd_client.h"
#include "apiserver/etcd_storage.h"
#include "apiserver/resources.h"

namespace routestatus::apiserver {
namespace {

TEST(EtcdKeysTest, PrefixesAreKubeApiserversRegistryKeys) {
  EXPECT_EQ(EtcdStorage::KeyPrefix(RoutesInfo()), "/registry/route.openshift.io/routes/");
  EXPECT_EQ(EtcdStorage::KeyPrefix(NamespacesInfo()), "/registry/namespaces/");
  EXPECT_EQ(EtcdStorage::KeyPrefix(CrdsInfo()),
            "/registry/apiextensions.k8s.io/customresourcedefinitions/");
}

TEST(EtcdKeysTest, PrefixEndIsClientv3sGetPrefixRangeEnd) {
  struct Case {
    std::string prefix;
    std::string end;
  };
  const Case cases[] = {
      {"/registry/route.openshift.io/routes/", "/registry/route.openshift.io/routes0"},
      {"/registry/route.openshift.io/routes/team-a/", "/registry/route.openshift.io/routes/team-a0"},
      {"a\xff", "b"},
      {"\xff\xff", std::string(1, '\0')},  // every key
  };
  for (const Case& c : cases) EXPECT_EQ(EtcdClient::PrefixEnd(c.prefix), c.end) << c.prefix;
}

}  // namespace
}  // namespace routestatus::apiserver
