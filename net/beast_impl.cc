// The one translation unit that compiles Beast's implementation and Asio's SSL
// implementation (BOOST_BEAST_SEPARATE_COMPILATION is defined for the whole build).
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
