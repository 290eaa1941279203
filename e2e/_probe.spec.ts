import { test, expect } from './support/fixtures.ts'
test.use({ javaScriptEnabled: false })
test('probe', async ({ page }) => {
  await page.goto('/sign-in')
  const cdp = await page.context().newCDPSession(page)
  const r = await Promise.race([cdp.send('Runtime.evaluate', { expression: 'document.querySelectorAll("p").length', returnByValue: true }), new Promise(r => setTimeout(() => r('TIMEOUT'), 3000))])
  console.log('runtime.evaluate', JSON.stringify(r))
})
