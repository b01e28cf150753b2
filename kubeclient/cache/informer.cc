#include "kubeclient/cache/informer.h"

#include <nlohmann/json.hpp>

namespace routestatus::kubeclient::cache {

namespace {

template <typename T>
struct Kind;

template <>
struct Kind<Route> {
  static const ResourceRef& Resource() { return RoutesResource(); }
  static StatusOr<Route> Decode(const nlohmann::json& o) { return RouteFromJson(o); }
  static constexpr bool kHasText = true;
  static StatusOr<Route> DecodeText(std::string_view t) { return RouteFromText(t); }
};

template <>
struct Kind<Namespace> {
  static const ResourceRef& Resource() { return NamespacesResource(); }
  static StatusOr<Namespace> Decode(const nlohmann::json& o) { return NamespaceFromJson(o); }
  static constexpr bool kHasText = false;
  static StatusOr<Namespace> DecodeText(std::string_view) {
    return Status(StatusCode::kInternal, "no text decoder for namespaces");
  }
};

template <typename T>
StatusOr<DecodedObject> Wrap(StatusOr<T> typed) {
  if (!typed.ok()) return typed.status();
  DecodedObject out;
  out.key = typed->Key();
  out.resource_version = typed->metadata.resource_version;
  out.object = std::make_shared<const T>(std::move(typed).value());
  return out;
}

template <typename T>
StatusOr<DecodedObject> DecodeAs(const nlohmann::json& object) {
  return Wrap<T>(Kind<T>::Decode(object));
}

template <typename T>
StatusOr<DecodedObject> DecodeTextAs(std::string_view text) {
  return Wrap<T>(Kind<T>::DecodeText(text));
}

template <typename T>
TextDecodeFunc TextDecoder() {
  if constexpr (Kind<T>::kHasText) {
    return &DecodeTextAs<T>;
  } else {
    return nullptr;
  }
}

template <typename T>
std::shared_ptr<const T> Cast(const std::shared_ptr<const void>& p) {
  return std::static_pointer_cast<const T>(p);
}

template <typename T>
std::vector<std::shared_ptr<const T>> CastAll(const std::vector<std::shared_ptr<const void>>& v) {
  std::vector<std::shared_ptr<const T>> out;
  out.reserve(v.size());
  for (const auto& p : v) out.push_back(Cast<T>(p));
  return out;
}

}  // namespace

template <typename T>
class Informer<T>::HandlerAdapter final : public RawEventHandler {
 public:
  explicit HandlerAdapter(EventHandler<T>* handler) : handler_(handler) {}
  void OnAdd(const DecodedObject& obj, bool initial_list) override {
    handler_->OnAdd(Cast<T>(obj.object), initial_list);
  }
  void OnUpdate(const DecodedObject& old_obj, const DecodedObject& new_obj) override {
    handler_->OnUpdate(Cast<T>(old_obj.object), Cast<T>(new_obj.object));
  }
  void OnDelete(const DecodedObject& last) override { handler_->OnDelete(Cast<T>(last.object)); }

 private:
  EventHandler<T>* handler_;
};

template <typename T>
Informer<T>::Informer(KubeClient& client, const Clock& clock, InformerOptions options)
    : reflector_(std::make_unique<Reflector>(client, Kind<T>::Resource(), clock, &DecodeAs<T>,
                                             std::move(options), TextDecoder<T>())) {}

template <typename T>
Informer<T>::~Informer() {
  reflector_->Stop();
}

template <typename T>
void Informer<T>::AddIndex(const std::string& name, IndexFunc<T> fn) {
  reflector_->store().AddIndex(
      name, [fn = std::move(fn)](const void* o) { return fn(*static_cast<const T*>(o)); });
}

template <typename T>
void Informer<T>::AddEventHandler(EventHandler<T>* handler) {
  adapters_.push_back(std::make_unique<HandlerAdapter>(handler));
  reflector_->AddHandler(adapters_.back().get());
}

template <typename T>
void Informer<T>::Start() { reflector_->Start(); }
template <typename T>
void Informer<T>::Run() { reflector_->Run(); }
template <typename T>
void Informer<T>::Stop() { reflector_->Stop(); }
template <typename T>
bool Informer<T>::WaitForSync() { return reflector_->WaitForSync(); }

template <typename T>
typename Informer<T>::Ptr Informer<T>::Get(const std::string& key) const {
  return Cast<T>(reflector_->store().Get(key));
}

template <typename T>
std::vector<typename Informer<T>::Ptr> Informer<T>::List() const {
  return CastAll<T>(reflector_->store().List());
}

template <typename T>
std::vector<typename Informer<T>::Ptr> Informer<T>::ByIndex(const std::string& index,
                                                           const std::string& value) const {
  return CastAll<T>(reflector_->store().ByIndex(index, value));
}

template <typename T>
bool Informer<T>::HasSynced() const { return reflector_->HasSynced(); }

template <typename T>
bool Informer<T>::IsCurrent() const { return reflector_->IsCurrent(); }

template <typename T>
std::vector<std::string> Informer<T>::Keys() const { return reflector_->store().Keys(); }

template <typename T>
InformerStats Informer<T>::Stats() const { return reflector_->Stats(); }

template class Informer<Route>;
template class Informer<Namespace>;

}  // namespace routestatus::kubeclient::cache
