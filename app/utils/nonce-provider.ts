import { createContext, useContext } from 'react'

// The per-request CSP nonce, for the inline scripts Remix and Clerk add. Empty in the browser, where
// it is no longer needed (and must not be exposed).
const NonceContext = createContext<string>('')

export const NonceProvider = NonceContext.Provider
export const useNonce = () => useContext(NonceContext)
