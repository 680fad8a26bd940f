// Forward-only shims for OpenSSL macros Swift cannot import.
// Rule: every function here is a one-line forward named shim_<C name>; no
// policy lives here (protocol floors, options and cipher choices are Swift).
#ifndef PINPROXY_COPENSSL_SHIM_H
#define PINPROXY_COPENSSL_SHIM_H

#include <openssl/opensslv.h>
#if OPENSSL_VERSION_MAJOR < 3
#error "pinproxy needs OpenSSL 3 or newer"
#endif

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/pem.h>
#include <openssl/evp.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/asn1.h>
#include <openssl/crypto.h>
#include <openssl/ocsp.h>

// SSL / SSL_CTX control macros.
static inline long shim_SSL_set_tlsext_host_name(SSL *s, const char *name) { return SSL_set_tlsext_host_name(s, name); }
static inline long shim_SSL_CTX_set_mode(SSL_CTX *c, long m) { return SSL_CTX_set_mode(c, m); }
static inline long shim_SSL_set_mode(SSL *s, long m) { return SSL_set_mode(s, m); }
static inline int shim_SSL_set_retry_verify(SSL *s) { return SSL_set_retry_verify(s); }
static inline long shim_SSL_CTX_set_min_proto_version(SSL_CTX *c, int v) { return SSL_CTX_set_min_proto_version(c, v); }
static inline long shim_SSL_CTX_set_max_proto_version(SSL_CTX *c, int v) { return SSL_CTX_set_max_proto_version(c, v); }
static inline long shim_SSL_CTX_set_session_cache_mode(SSL_CTX *c, long m) { return SSL_CTX_set_session_cache_mode(c, m); }
static inline int shim_SSL_get_ex_new_index(void) { return SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL); }
static inline long shim_SSL_CTX_add_extra_chain_cert(SSL_CTX *c, X509 *x) { return SSL_CTX_add_extra_chain_cert(c, x); }
static inline long shim_SSL_set_tlsext_status_type(SSL *s, int type) { return SSL_set_tlsext_status_type(s, type); }
static inline long shim_SSL_get_tlsext_status_ocsp_resp(SSL *s, const unsigned char **resp) { return SSL_get_tlsext_status_ocsp_resp(s, resp); }
static inline long shim_SSL_CTX_set_tlsext_status_cb(SSL_CTX *c, int (*cb)(SSL *, void *)) { return SSL_CTX_set_tlsext_status_cb(c, cb); }
static inline long shim_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *c, int (*cb)(SSL *, int *, void *)) { return SSL_CTX_set_tlsext_servername_callback(c, cb); }
static inline long shim_SSL_CTX_set1_groups_list(SSL_CTX *c, const char *list) { return SSL_CTX_set1_groups_list(c, list); }
static inline int shim_SSL_get_negotiated_group(SSL *s) { return (int)SSL_get_negotiated_group(s); }

// Legacy (EC_KEY-backed) public keys, deprecated in OpenSSL 3 but kept on
// purpose: X509_set_pubkey with such a key encodes it directly, where a
// provider key costs an OSSL_ENCODER and an OSSL_DECODER round trip (75% of
// minting a leaf, see CertificatePublicKey.swift).
static inline EC_KEY *shim_d2i_EC_PUBKEY(EC_KEY **a, const unsigned char **pp, long length) { return d2i_EC_PUBKEY(a, pp, length); }
static inline int shim_EVP_PKEY_assign_EC_KEY(EVP_PKEY *pkey, EC_KEY *key) { return EVP_PKEY_assign_EC_KEY(pkey, key); }
static inline void shim_EC_KEY_free(EC_KEY *key) { EC_KEY_free(key); }

// SSL_OP_* and SSL_MODE_* are built with casts Swift does not import.
static const uint64_t shim_SSL_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;
static const uint64_t shim_SSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
static const long shim_SSL_MODE_RELEASE_BUFFERS = SSL_MODE_RELEASE_BUFFERS;
static const long shim_SSL_MODE_ENABLE_PARTIAL_WRITE = SSL_MODE_ENABLE_PARTIAL_WRITE;
static const long shim_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER = SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
static const long shim_SSL_SESS_CACHE_CLIENT = SSL_SESS_CACHE_CLIENT;
static const long shim_SSL_SESS_CACHE_NO_INTERNAL_STORE = SSL_SESS_CACHE_NO_INTERNAL_STORE;
static const long shim_SSL_SESS_CACHE_OFF = SSL_SESS_CACHE_OFF;
static const long shim_SSL_MODE_NO_AUTO_CHAIN = SSL_MODE_NO_AUTO_CHAIN;

// Typed stacks are macros; forward to the generic stack API.
static inline int shim_sk_X509_num(const STACK_OF(X509) *sk) { return sk_X509_num(sk); }
static inline X509 *shim_sk_X509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }
static inline STACK_OF(X509) *shim_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int shim_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
static inline void shim_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }
static inline void shim_sk_X509_pop_free(STACK_OF(X509) *sk) { sk_X509_pop_free(sk, X509_free); }
static inline int shim_sk_GENERAL_NAME_num(const STACK_OF(GENERAL_NAME) *sk) { return sk_GENERAL_NAME_num(sk); }
static inline GENERAL_NAME *shim_sk_GENERAL_NAME_value(const STACK_OF(GENERAL_NAME) *sk, int i) { return sk_GENERAL_NAME_value(sk, i); }
static inline void shim_GENERAL_NAMES_free(STACK_OF(GENERAL_NAME) *sk) { GENERAL_NAMES_free(sk); }
static inline int shim_sk_GENERAL_SUBTREE_num(const STACK_OF(GENERAL_SUBTREE) *sk) { return sk_GENERAL_SUBTREE_num(sk); }
static inline GENERAL_SUBTREE *shim_sk_GENERAL_SUBTREE_value(const STACK_OF(GENERAL_SUBTREE) *sk, int i) { return sk_GENERAL_SUBTREE_value(sk, i); }
static inline int shim_sk_ASN1_INTEGER_num(const STACK_OF(ASN1_INTEGER) *sk) { return sk_ASN1_INTEGER_num(sk); }
static inline ASN1_INTEGER *shim_sk_ASN1_INTEGER_value(const STACK_OF(ASN1_INTEGER) *sk, int i) { return sk_ASN1_INTEGER_value(sk, i); }
static inline STACK_OF(GENERAL_SUBTREE) *shim_sk_GENERAL_SUBTREE_new_null(void) { return sk_GENERAL_SUBTREE_new_null(); }
static inline int shim_sk_GENERAL_SUBTREE_push(STACK_OF(GENERAL_SUBTREE) *sk, GENERAL_SUBTREE *t) { return sk_GENERAL_SUBTREE_push(sk, t); }
static inline GENERAL_NAMES *shim_sk_GENERAL_NAME_new_null(void) { return sk_GENERAL_NAME_new_null(); }
static inline int shim_sk_GENERAL_NAME_push(GENERAL_NAMES *sk, GENERAL_NAME *n) { return sk_GENERAL_NAME_push(sk, n); }
static inline STACK_OF(ASN1_OBJECT) *shim_sk_ASN1_OBJECT_new_null(void) { return sk_ASN1_OBJECT_new_null(); }
static inline int shim_sk_ASN1_OBJECT_push(STACK_OF(ASN1_OBJECT) *sk, ASN1_OBJECT *o) { return sk_ASN1_OBJECT_push(sk, o); }
static inline void shim_sk_ASN1_OBJECT_pop_free(STACK_OF(ASN1_OBJECT) *sk) { sk_ASN1_OBJECT_pop_free(sk, ASN1_OBJECT_free); }
static inline void shim_sk_ASN1_INTEGER_pop_free(STACK_OF(ASN1_INTEGER) *sk) { sk_ASN1_INTEGER_pop_free(sk, ASN1_INTEGER_free); }
static inline STACK_OF(X509_CRL) *shim_sk_X509_CRL_new_null(void) { return sk_X509_CRL_new_null(); }
static inline int shim_sk_X509_CRL_push(STACK_OF(X509_CRL) *sk, X509_CRL *c) { return sk_X509_CRL_push(sk, c); }
static inline void shim_sk_X509_CRL_free(STACK_OF(X509_CRL) *sk) { sk_X509_CRL_free(sk); }

// Memory and BIO helpers.
static inline void shim_OPENSSL_free(void *p) { OPENSSL_free(p); }
static inline long shim_BIO_get_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
static inline long shim_BIO_set_mem_eof_return(BIO *b, long v) { return BIO_set_mem_eof_return(b, v); }
static inline int shim_BIO_pending(BIO *b) { return (int)BIO_pending(b); }

#endif
